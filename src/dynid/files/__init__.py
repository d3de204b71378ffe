"""Safe inputs and outputs, the lowest room: every other room reads and writes files through it.

Modules, one job each:
    inputs   open an input file or document so that a bad one ends in one clear error naming it
             (directories, devices, non-UTF-8 text, YAML alias bombs, duplicate keys, deep nesting)
    outputs  write an output without destroying anything: temp file then rename, inputs never
             overwritten, directory outputs replaced whole, clean-up on SIGINT/SIGTERM
    environment  cache and configuration directories of Numba and matplotlib for a user who
             cannot write where they expect (a read-only install, an unusable HOME)

It imports nothing of dynid but ``dynid.errors``, so the robot loaders (``robot/``) and the data
readers (``data/``) both use it without importing each other.
"""
