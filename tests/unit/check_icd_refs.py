#!/usr/bin/env python3
"""The layer's own references on ICD objects are held by IcdRef (layer/core/icd_ref.hpp).

A clRetain* / clRelease* call through a dispatch table (next().clReleaseEvent(,
ours().clRetainMemObject(, table->clReleaseContext() in a layer/ source file
is allowed only in icd_ref.hpp, which makes every one of the layer's, and in
the entry points that pass the application's own retain or release through
to the ICD (as many as each has: ALLOWED).  Anything else is a hand-written
retain or release, which a holder should own.  Comments are not searched.

Usage: check_icd_refs.py SOURCE_ROOT.  Exit 0 when none is found, 1 with one
line per call (file:line: text).

It first checks itself on a made-up tree: a release in a feature file and one
too many in an allowed file must be reported; the holder's own calls, a
comment naming the call and a dispatch-table slot that is not called must
not.
"""
import os
import re
import sys
import tempfile

CALL = re.compile(r'(?:\.|->)\s*cl(?:Retain|Release)\w*\s*\(')
HOLDER = 'layer/core/icd_ref.hpp'
# The application's clRetain*/clRelease* passing through the layer's entry points.
ALLOWED = {
    'layer/core/events.cpp': 2,          # retain_event, release_event
    'layer/import/fresh_handles.cpp': 4,  # retain_mem_object, release_mem_object (counted and not)
    'layer/entry/queue_calls.cpp': 2,    # release_command_queue, retain_command_queue
    'layer/entry/entry_context.cpp': 1,  # release_context
}


def code_of(line):
    return line.split('//', 1)[0]


def scan(root):
    found = []
    layer = os.path.join(root, 'layer')
    for d, dirs, files in os.walk(layer):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(('.cpp', '.hpp', '.h')):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root).replace(os.sep, '/')
            if rel == HOLDER:
                continue
            calls = []
            with open(path, encoding='utf-8') as src:
                for n, line in enumerate(src, 1):
                    if CALL.search(code_of(line)):
                        calls.append(f'{rel}:{n}: {line.strip()}')
            if len(calls) > ALLOWED.get(rel, 0):
                found.extend(calls)
    return found


def self_check():
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
        write(HOLDER, 'inline cl_int release(cl_event e) { return next().clReleaseEvent(e); }\n')
        write('layer/handoff/x.cpp', '    next().clReleaseEvent(e);  // by hand\n'
                                     '// next().clRetainEvent(e) in a comment\n'
                                     '    wrap(t.clReleaseEvent, release_event);\n')
        write('layer/entry/entry_context.cpp', '    return next().clReleaseContext(c);\n'
                                               '    next()->clRetainContext(c);\n')
        write('layer/entry/queue_calls.cpp', '    return next().clReleaseCommandQueue(q);\n')
        got = scan(root)
        want = ['layer/entry/entry_context.cpp:1', 'layer/entry/entry_context.cpp:2', 'layer/handoff/x.cpp:1']
        ok = sorted(g.split(': ', 1)[0] for g in got) == want
        if not ok:
            print('check_icd_refs self-check failed:', got)
        return ok


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not self_check():
        return 1
    found = scan(sys.argv[1])
    for line in found:
        print(line)
    if found:
        print(f'{len(found)} line(s) with a hand-written clRetain*/clRelease* call outside {HOLDER}: hold the reference '
              'in an IcdRef')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
