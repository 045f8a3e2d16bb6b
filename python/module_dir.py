"""Prints the folder to install the package into: ``module_dir.py PREFIX MESONS_CHOICE``.

Meson's choice where the interpreter reads it (in sys.path), else the
interpreter's own module folder under PREFIX (Debian's python3 reads
/usr/local/lib/python3.X/dist-packages, while meson 1.0 names
/usr/local/lib/python3/dist-packages for that prefix), else meson's choice
with a second line saying it is not on the interpreter's path.
"""

import os
import sys

prefix, choice = sys.argv[1].rstrip("/"), sys.argv[2]
path = [os.path.normpath(p) for p in sys.path if p]
if os.path.normpath(choice) in path:
    print(choice)
else:
    under = [p for p in path if p.startswith(prefix + "/") and p.endswith("-packages")]
    if under:
        print(under[0])
    else:
        print(choice)
        print("not on %s's module path: set PYTHONPATH=%s to import it" % (sys.executable, choice))
