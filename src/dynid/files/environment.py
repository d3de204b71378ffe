"""Cache and configuration directories of the libraries dynid runs on, for a user who cannot write
where they expect to (issue 26: a read-only install, another account, an unusable HOME).

- **Numba** caches compiled kernels (``cache=True``) beside the source (``__pycache__`` of the
  installed package), else in the user's cache directory (``$XDG_CACHE_HOME/numba`` or
  ``~/.cache/numba``); when neither can be written it raises "cannot cache function ...: no
  locator available" at import. ``numba_cache`` then points ``NUMBA_CACHE_DIR`` at a private
  directory of this user in the system's temporary directory, or, when even that is impossible,
  turns the cache off (kernels are compiled again in every run: slower, never a crash).
- **matplotlib** keeps its configuration and font cache in ``$MPLCONFIGDIR`` or
  ``~/.config/matplotlib``; when that cannot be written it makes a temporary directory and logs a
  multi-line warning on every run. ``matplotlib_config`` points ``MPLCONFIGDIR`` at the same kind
  of private directory first.

Both only look (``os.access`` on the directory or its nearest existing parent, no file is
created), run once when ``dynid`` is imported, and never override a variable the user set.
Standard library only: it runs on every start of the command line.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # the installed dynid package


def _can_write(directory: Path) -> bool:
    """Whether ``directory`` could be created (if missing) and written by this process."""
    path = directory
    while not path.exists():
        if path.parent == path:
            return False
        path = path.parent
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def private_directory(name: str) -> Path | None:
    """``<tmp>/dynid-<name>-<uid>``, created with mode 0700; None when it cannot be made or is not
    safely ours (another user could plant cached code there: it must be our own, not a link, and
    writable by us alone)."""
    path = Path(tempfile.gettempdir()) / f"dynid-{name}-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    if not stat.S_ISDIR(st.st_mode) or not mine or st.st_mode & 0o022 or not os.access(path, os.W_OK | os.X_OK):
        return None
    return path


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "numba"


def numba_cache() -> str:
    """Make Numba's kernel cache usable (module docstring); returns where it goes: 'in-tree',
    'user', 'NUMBA_CACHE_DIR' (set by the user), a private directory, or 'off'."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return "NUMBA_CACHE_DIR"
    if _can_write(_PACKAGE / "dynamics" / "__pycache__"):
        return "in-tree"
    if _can_write(_user_cache()):
        return "user"
    private = private_directory("numba-cache")
    if private is not None:
        os.environ["NUMBA_CACHE_DIR"] = str(private)
        return str(private)
    import numba.core.dispatcher

    numba.core.dispatcher.Dispatcher.enable_caching = lambda self: None  # cache=True becomes no cache
    return "off"


def matplotlib_config() -> str:
    """Give matplotlib a writable configuration directory (module docstring); returns which."""
    if os.environ.get("MPLCONFIGDIR"):
        return "MPLCONFIGDIR"
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    if _can_write(Path(base) / "matplotlib"):
        return "user"
    private = private_directory("matplotlib")
    if private is not None:
        os.environ["MPLCONFIGDIR"] = str(private)
        return str(private)
    return "temporary"  # matplotlib makes its own temporary directory (and says so)
