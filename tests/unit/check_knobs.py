#!/usr/bin/env python3
"""Every CLDMABUF_* name the harness reads is documented, and every CLDMABUF_DEBUG word.

The layer's runtime settings (the table in layer/**/settings_table.cpp) are
the user's: each is a row of docs/user-guide.md's "## Settings" table, except
CLDMABUF_DEBUG, the tests' instruments, which must not be.  Where the harness
sets one of the settings that take a word (CLDMABUF_X=word, a meson
environment), the word must be one the table accepts: an instrument's old
value (CLDMABUF_SEMAPHORES=force) would only be refused.

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
# Where settings and words are set too (their own CLDMABUF_ names are the
# Python package's and the build's, not the harness's).
SETS_ALSO = ('python', 'examples')
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


def harness_texts(root):
    """(relative path, text) of every file that may set a setting or a word
    (tests/unit/ left out: the parsers' tests use unknown words and refused values)."""
    for top in SCANNED + SETS_ALSO:
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
                        yield os.path.relpath(path, root), f.read()
                except OSError:
                    continue


def harness_debug_words(root):
    """word -> files that set it."""
    uses = {}
    for rel, text in harness_texts(root):
        words = set(HELPER_WORD.findall(text))
        for group in SET_WORDS.findall(text):
            words |= {w for w in group.split(',') if w}
        for w in words:
            uses.setdefault(w, []).append(rel)
    return uses


# {"CLDMABUF_EGL", K::word, "auto|off", ...}
WORD_ROW = re.compile(r'\{\s*"(CLDMABUF_[A-Z0-9_]+)"\s*,\s*K::word\s*,\s*"([^"]+)"')
# CLDMABUF_X=value, 'CLDMABUF_X' : 'value', .set('CLDMABUF_X', 'value'), env_is("CLDMABUF_X", "value").
SET_VALUE = re.compile(r'(?<![A-Za-z0-9_])(CLDMABUF_[A-Z0-9_]+)(?:=|[\'"]\s*[:,]\s*[\'"])([A-Za-z0-9_-]*)')


def refused_values(root):
    """One line per word setting the harness sets to a value its row does not accept."""
    accepted = {}
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, 'layer')):
        if 'settings_table.cpp' in filenames:
            with open(os.path.join(dirpath, 'settings_table.cpp'), encoding='utf-8') as f:
                for name, words in WORD_ROW.findall(f.read()):
                    accepted[name] = set(words.split('|'))
    out = set()
    for rel, text in harness_texts(root):
        for name, value in SET_VALUE.findall(text):
            if name in accepted and value and value not in accepted[name]:
                out.add('%s=%s: set in %s but the layer accepts only %s' %
                        (name, value, rel, ', '.join(sorted(accepted[name]))))
    return sorted(out)


def guide_settings_rows(root):
    """The variables of the rows of docs/user-guide.md's "## Settings" table."""
    rows = set()
    guide = os.path.join(root, 'docs', 'user-guide.md')
    if not os.path.exists(guide):
        return rows
    inside = False
    with open(guide, encoding='utf-8') as f:
        for line in f:
            if line.startswith('## '):
                inside = line.strip() == '## Settings'
            elif inside:
                m = re.match(r'\|\s*`(CLDMABUF_[A-Z0-9_]+)`\s*\|', line)
                if m:
                    rows.add(m.group(1))
    return rows


def guide_problems(root):
    """The user guide's table holds every user setting and not the tests' CLDMABUF_DEBUG."""
    settings = runtime_settings(root)
    rows = guide_settings_rows(root)
    debug = 'CLDMABUF_' 'DEBUG'
    out = []
    for name in sorted(settings - {debug} - rows):
        out.append('%s: a runtime setting but not a row of docs/user-guide.md\'s "## Settings" table' % name)
    if debug in rows:
        out.append('%s: the tests\' instruments, a row of docs/user-guide.md\'s "## Settings" table '
                   '(they belong in tests/README.md)' % debug)
    return out


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
        os.makedirs(os.path.join(root, 'docs'))
        os.makedirs(os.path.join(root, 'python'))
        with open(os.path.join(root, 'layer', 'base', 'settings_table.cpp'), 'w') as f:
            f.write('{"CLDMABUF_' 'LOG", ...}\n{"%s", K::debug, ...}\n'
                    '{"CLDMABUF_SEMAPHORES", K::word, "auto|off", 0, 0, ...}\n'
                    '{"CLDMABUF_STATS", K::flag, nullptr, 0, 0, ...}\n'
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
            f.write('CLDMABUF_SEMAPHORES=force ./a; CLDMABUF_SEMAPHORES=off ./b; CLDMABUF_SEMAPHORES=$mode ./c\n')
        with open(os.path.join(root, 'python', 'meson.build'), 'w') as f:
            f.write("env.set('CLDMABUF_SEMAPHORES', 'sometimes')\n")
        with open(os.path.join(root, 'tests', 'unit', 'test_parser.cpp'), 'w') as f:
            f.write('setenv("%s", "st-unit-bogus", 1);\n' % debug)
            f.write('setenv("CLDMABUF_SEMAPHORES", "st-unit-refused", 1);\n')
        with open(os.path.join(root, 'docs', 'user-guide.md'), 'w') as f:
            f.write('## Settings\n\n| variable | effect |\n|---|---|\n| `CLDMABUF_' 'LOG` | ... |\n'
                    '| `CLDMABUF_SEMAPHORES` | ... |\n| `%s` | ... |\n'
                    '## Elsewhere\n\n| `CLDMABUF_STATS` | ... |\n' % debug)
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
        values = refused_values(root)
        expected = ['CLDMABUF_SEMAPHORES=force: set in tests/e2e/run but the layer accepts only auto, off',
                    'CLDMABUF_SEMAPHORES=sometimes: set in python/meson.build but']
        if len(values) != len(expected) or not all(any(e in v for v in values) for e in expected):
            print('check_knobs self-test: expected the values %s reported, got %s' % (expected, values))
            return False
        guide = guide_problems(root)
        expected = ['CLDMABUF_STATS: a runtime setting but not a row', '%s: the tests\' instruments, a row' % debug]
        if len(guide) != len(expected) or not all(any(e in g for g in guide) for e in expected):
            print('check_knobs self-test: expected the user guide problems %s reported, got %s' % (expected, guide))
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
    values = refused_values(root)
    for line in values:
        print(line)
    guide = guide_problems(root)
    for line in guide:
        print(line)
    settings = runtime_settings(root)
    if not settings:
        print('check_knobs: no runtime settings found (layer/**/settings_table.cpp moved?)')
        return 1
    if not layer_debug_words(root):
        print('check_knobs: no CLDMABUF_DEBUG words found (layer/**/settings_table.cpp moved?)')
        return 1
    if gone or words or values or guide:
        return 1
    print('check_knobs: %d harness names documented, %d runtime settings, %d CLDMABUF_DEBUG words' %
          (len(harness_names(root)) - len([n for n in harness_names(root) if n in settings]), len(settings),
           len(layer_debug_words(root))))
    return 0


if __name__ == '__main__':
    sys.exit(main())
