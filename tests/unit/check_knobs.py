#!/usr/bin/env python3
"""Every CLDMABUF_* name the harness reads is documented, and every CLDMABUF_DEBUG word.

A CLDMABUF_* name in tests/, scripts/, conformance/, bench/ or tools/ (any
file but Markdown) must be either one of the layer's runtime settings (the
table in layer/**/settings_table.cpp, documented on its own) or named in
tests/README.md.

The words of CLDMABUF_DEBUG (the layer's test instruments: the entries
{"word", DebugWord::...} in layer/**/settings_table.cpp) and the rows of
tests/README.md's CLDMABUF_DEBUG table must be the same words, and every word
the harness sets (CLDMABUF_DEBUG=word,..., a meson environment, the test
helpers debug_word_on("word") and DebugWordScope("word")) must be one of
them.  tests/unit/ is not searched for words: the parser's own tests use
unknown words on purpose.

Usage: check_knobs.py SOURCE_ROOT.  Exit 0 when all are, 1 with one line per
problem (and the files concerned).

It first checks itself on a made-up tree: an undocumented knob, an
undocumented word, a documented word the layer does not accept and an
unknown word a test sets must be reported; a documented knob, a runtime
setting and a documented word must not.
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


# {"egl-force-copy", DebugWord::egl_force_copy, ...}
LAYER_WORD = re.compile(r'\{\s*"([^"]+)"\s*,\s*DebugWord::')
# CLDMABUF_DEBUG=a,b (shell, comments), 'CLDMABUF_DEBUG' : 'a' (a meson dict),
# .set('CLDMABUF_DEBUG', 'a') and setenv("CLDMABUF_DEBUG", "a", 1).
SET_WORDS = re.compile(r'CLDMABUF_DEBUG(?:=|[\'"]\s*[:,]\s*[\'"])([A-Za-z0-9_,-]+)')
HELPER_WORD = re.compile(r'\b(?:debug_word_on|DebugWordScope)\s*\(\s*"([^"]*)"')
README_SECTION = re.compile(r'^#+ .*CLDMABUF_DEBUG')


def layer_debug_words(root):
    found = set()
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, 'layer')):
        if 'settings_table.cpp' in filenames:
            with open(os.path.join(dirpath, 'settings_table.cpp'), encoding='utf-8') as f:
                found |= set(LAYER_WORD.findall(f.read()))
    return found


def documented_debug_words(root):
    """The first column of the table under tests/README.md's CLDMABUF_DEBUG heading."""
    words = set()
    readme = os.path.join(root, 'tests', 'README.md')
    if not os.path.exists(readme):
        return words
    inside = False
    with open(readme, encoding='utf-8') as f:
        for line in f:
            if line.startswith('#'):
                inside = bool(README_SECTION.match(line))
            elif inside:
                m = re.match(r'\|\s*`([^`]+)`\s*\|', line)
                if m:
                    words.add(m.group(1))
    return words


def harness_debug_words(root):
    """word -> files that set it (tests/unit/ left out: the parser's tests use unknown words)."""
    uses = {}
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith('build')]
            if os.path.relpath(dirpath, root).replace(os.sep, '/').startswith('tests/unit'):
                continue
            for fn in filenames:
                if fn.endswith('.md'):
                    continue
                path = os.path.join(dirpath, fn)
                try:
                    with open(path, encoding='utf-8', errors='ignore') as f:
                        text = f.read()
                except OSError:
                    continue
                words = set(HELPER_WORD.findall(text))
                for group in SET_WORDS.findall(text):
                    words |= {w for w in group.split(',') if w}
                for w in words:
                    uses.setdefault(w, []).append(os.path.relpath(path, root))
    return uses


def debug_word_problems(root):
    """One line per CLDMABUF_DEBUG word that is not accepted, documented and known alike."""
    accepted = layer_debug_words(root)
    documented = documented_debug_words(root)
    out = []
    for w in sorted(accepted - documented):
        out.append('CLDMABUF_DEBUG word %s: accepted by the layer but not in tests/README.md\'s CLDMABUF_DEBUG table' % w)
    for w in sorted(documented - accepted):
        out.append('CLDMABUF_DEBUG word %s: in tests/README.md but not accepted by the layer (settings_table.cpp)' % w)
    for w, files in sorted(harness_debug_words(root).items()):
        if w not in accepted:
            out.append('CLDMABUF_DEBUG word %s: set in %s but not accepted by the layer' % (w, ', '.join(sorted(files))))
    return out


def missing(root):
    readme = os.path.join(root, 'tests', 'README.md')
    documented = names_in(readme) if os.path.exists(readme) else set()
    settings = runtime_settings(root)
    uses = harness_names(root)
    return {n: sorted(f) for n, f in uses.items() if n not in settings and n not in documented}


def self_test():
    knob = 'CLDMABUF_' + 'SELF_TEST_UNDOCUMENTED'  # split: the real scan must not see it
    debug = 'CLDMABUF_' 'DEBUG'
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, 'layer', 'base'))
        os.makedirs(os.path.join(root, 'tests', 'e2e'))
        os.makedirs(os.path.join(root, 'tests', 'unit'))
        with open(os.path.join(root, 'layer', 'base', 'settings_table.cpp'), 'w') as f:
            f.write('{"CLDMABUF_' 'LOG", ...}\n{"%s", K::debug, ...}\n'
                    '    {"st-documented", DebugWord::a, false,\n     "..."},\n'
                    '    {"st-undocumented", DebugWord::b, true, "..."},\n' % debug)
        with open(os.path.join(root, 'tests', 'README.md'), 'w') as f:
            f.write('| `CLDMABUF_' 'DOCUMENTED` | ... |\n'
                    '### `%s`: words\n\n| word | what |\n| --- | --- |\n'
                    '| `st-documented` | ... |\n| `st-not-accepted` | ... |\n'
                    '### Another table\n\n| `st-elsewhere` | ... |\n' % debug)
        with open(os.path.join(root, 'tests', 'e2e', 't.cpp'), 'w') as f:
            f.write('getenv("%s"); getenv("CLDMABUF_' 'DOCUMENTED"); getenv("CLDMABUF_' 'LOG");\n'
                    '#ifndef CL_EXT_CLDMABUF_H\n// CLDMABUF_SIM_* knobs\n'
                    'debug_word_on("st-documented"); DebugWordScope("st-helper-unknown");\n' % knob)
        with open(os.path.join(root, 'tests', 'e2e', 'meson.build'), 'w') as f:
            f.write("env.set('%s', 'st-documented,st-meson-unknown')\n"
                    "{'%s' : 'st-undocumented'}\n" % (debug, debug))
        with open(os.path.join(root, 'tests', 'e2e', 'run'), 'w') as f:
            f.write('%s=st-documented,st-shell-unknown ./e2e-tests\n' % debug)
        with open(os.path.join(root, 'tests', 'unit', 'test_parser.cpp'), 'w') as f:
            f.write('setenv("%s", "st-unit-bogus", 1);\n' % debug)
        got = missing(root)
        if list(got) != [knob]:
            print('check_knobs self-test: expected only %s reported, got %s' % (knob, sorted(got)))
            return False
        words = debug_word_problems(root)
        expected = ['st-undocumented: accepted by the layer but not in',
                    'st-not-accepted: in tests/README.md but not accepted',
                    'st-helper-unknown: set in tests/e2e/t.cpp but',
                    'st-meson-unknown: set in tests/e2e/meson.build but',
                    'st-shell-unknown: set in tests/e2e/run but']
        if len(words) != len(expected) or not all(any(e in w for w in words) for e in expected):
            print('check_knobs self-test: expected the words %s reported, got %s' % (expected, words))
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
    words = debug_word_problems(root)
    for line in words:
        print(line)
    settings = runtime_settings(root)
    if not settings:
        print('check_knobs: no runtime settings found (layer/**/settings_table.cpp moved?)')
        return 1
    if not layer_debug_words(root):
        print('check_knobs: no CLDMABUF_DEBUG words found (layer/**/settings_table.cpp moved?)')
        return 1
    if gone or words:
        return 1
    print('check_knobs: %d harness names documented, %d runtime settings, %d CLDMABUF_DEBUG words' %
          (len(harness_names(root)) - len([n for n in harness_names(root) if n in settings]), len(settings),
           len(layer_debug_words(root))))
    return 0


if __name__ == '__main__':
    sys.exit(main())
