#!/usr/bin/env python3
"""Every CLDMABUF_* name the harness reads is documented (issue #31, item 4).

A CLDMABUF_* name in tests/, scripts/, conformance/, bench/ or tools/ (any
file but Markdown) must be either one of the layer's runtime settings (the
table in layer/**/settings_table.cpp, documented on its own) or named in
tests/README.md.  Usage: check_knobs.py SOURCE_ROOT.  Exit 0 when all are,
1 with one line per missing name (and the files that use it).

It first checks itself on a made-up tree: an undocumented knob must be
reported, a documented one and a runtime setting must not.
"""
import os
import re
import sys
import tempfile

SCANNED = ('tests', 'scripts', 'conformance', 'bench', 'tools')
# Not a name: "CL_EXT_CLDMABUF_H" contains one; "CLDMABUF_SIM_*" is a prefix.
NAME = re.compile(r'(?<![A-Za-z0-9_])CLDMABUF_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_*])')
SKIP_DIRS = {'.git', 'corpus'}  # fuzz corpora are data


def names_in(path):
    try:
        with open(path, encoding='utf-8', errors='ignore') as f:
            return set(NAME.findall(f.read()))
    except OSError:
        return set()


def runtime_settings(root):
    found = set()
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, 'layer')):
        if 'settings_table.cpp' in filenames:
            with open(os.path.join(dirpath, 'settings_table.cpp'), encoding='utf-8') as f:
                found |= set(re.findall(r'"(CLDMABUF_[A-Z0-9_]+)"', f.read()))
    return found


def harness_names(root):
    """name -> files (relative to root) that mention it."""
    uses = {}
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith('build')]
            for fn in filenames:
                if fn.endswith('.md'):
                    continue
                path = os.path.join(dirpath, fn)
                for name in names_in(path):
                    uses.setdefault(name, []).append(os.path.relpath(path, root))
    return uses


def missing(root):
    readme = os.path.join(root, 'tests', 'README.md')
    documented = names_in(readme) if os.path.exists(readme) else set()
    settings = runtime_settings(root)
    uses = harness_names(root)
    return {n: sorted(f) for n, f in uses.items() if n not in settings and n not in documented}


def self_test():
    knob = 'CLDMABUF_' + 'SELF_TEST_UNDOCUMENTED'  # split: the real scan must not see it
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, 'layer', 'base'))
        os.makedirs(os.path.join(root, 'tests', 'e2e'))
        with open(os.path.join(root, 'layer', 'base', 'settings_table.cpp'), 'w') as f:
            f.write('{"CLDMABUF_' 'LOG", ...}\n')
        with open(os.path.join(root, 'tests', 'README.md'), 'w') as f:
            f.write('| `CLDMABUF_' 'DOCUMENTED` | ... |\n')
        with open(os.path.join(root, 'tests', 'e2e', 't.cpp'), 'w') as f:
            f.write('getenv("%s"); getenv("CLDMABUF_' 'DOCUMENTED"); getenv("CLDMABUF_' 'LOG");\n'
                    '#ifndef CL_EXT_CLDMABUF_H\n// CLDMABUF_SIM_* knobs\n' % knob)
        got = missing(root)
        if list(got) != [knob]:
            print('check_knobs self-test: expected only %s reported, got %s' % (knob, sorted(got)))
            return False
    return True


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not self_test():
        return 1
    root = sys.argv[1]
    if not os.path.isfile(os.path.join(root, 'tests', 'README.md')):
        print('check_knobs: %s/tests/README.md is missing' % root)
        return 1
    gone = missing(root)
    for name, files in sorted(gone.items()):
        print('%s: read in %s but neither a runtime setting nor in tests/README.md' % (name, ', '.join(files)))
    settings = runtime_settings(root)
    if not settings:
        print('check_knobs: no runtime settings found (layer/**/settings_table.cpp moved?)')
        return 1
    if gone:
        return 1
    print('check_knobs: %d harness names documented, %d runtime settings' %
          (len(harness_names(root)) - len([n for n in harness_names(root) if n in settings]), len(settings)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
