#!/usr/bin/env python3
"""scripts/check-floors on small trees: each rule it enforces fails its
tree with the file and line named, and the real tree passes."""
import os
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]
REPO = sys.argv[2]
failures = 0


def tree(files):
    root = tempfile.mkdtemp(prefix="floors-")
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
    return root


def run(root):
    p = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True, text=True)
    return p.returncode, p.stderr


def expect(name, root, rc, needle):
    global failures
    got_rc, err = run(root)
    ok = got_rc == rc and (needle is None or needle in err)
    print(f"{'PASS' if ok else 'FAIL'} {name}")
    if not ok:
        failures += 1
        print(f"  rc {got_rc} (want {rc}); stderr:\n{err}")


BASE = {
    "layer/base/log.hpp": "#pragma once\n",
    "layer/core/registry.hpp": '#pragma once\n#include "layer/base/log.hpp"\n',
    "layer/import/buffer.cpp": '#include "layer/core/registry.hpp"\n',
    "layer/entry/entry.cpp": '#include "layer/import/buffer.hpp"\n',
    "layer/import/buffer.hpp": "#pragma once\n",
}

expect("a clean tree passes", tree(BASE), 0, None)
expect("an upward include fails, naming file and line",
       tree({**BASE, "layer/core/registry.cpp": '#include "layer/base/log.hpp"\n#include "layer/import/buffer.hpp"\n'}),
       1, "layer/core/registry.cpp:2: upward include: layer/import/buffer.hpp is on the features floor")
expect("a cycle between rooms of one floor fails",
       tree({**BASE, "layer/blit/copy.cpp": '#include "layer/import/buffer.hpp"\n',
             "layer/blit/copy.hpp": "#pragma once\n",
             "layer/import/image.cpp": '#include "layer/blit/copy.hpp"\n'}),
       1, "include cycle between rooms blit, import")
expect("an include against the floor's order of rooms fails",
       tree({**BASE, "layer/sync/wait.hpp": "#pragma once\n",
             "layer/blit/copy.cpp": '#include "layer/sync/wait.hpp"\n'}),
       1, "layer/blit/copy.cpp:1: sideways include: layer/sync is not below layer/blit")
expect("a cycle between modules of one room fails",
       tree({**BASE, "layer/base/settings.hpp": "#pragma once\n",
             "layer/base/settings.cpp": '#include "layer/base/log.hpp"\n',
             "layer/base/log.cpp": '#include "layer/base/settings.hpp"\n'}),
       1, "include cycle between modules layer/base/log, layer/base/settings")
expect("a file in the layer's root fails", tree({**BASE, "layer/stray.cpp": ""}), 1,
       "layer/stray.cpp: in the layer's root")
expect("a room on no floor fails", tree({**BASE, "layer/newroom/x.cpp": ""}), 1,
       "room layer/newroom is on no floor")
expect("the repository's layer passes", REPO, 0, None)
sys.exit(1 if failures else 0)
