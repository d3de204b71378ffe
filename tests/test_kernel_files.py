"""Generated kernel modules of older generator versions are removed from the kernel directory,
with their compiled files, when a new module is written and they were not written or compiled for
a week; nothing else is (dynamics/kernel_files.py)."""

import importlib
import os
import time

kernel_files = importlib.import_module("dynid.dynamics.kernel_files")

OLD, NEW = "0123456789abcdef", "fedcba9876543210"  # two generator digests
WEEK = kernel_files.STALE_SECONDS


def _module(directory, key, generator, age, compiled=("joint_0-11.py311.nbi", "joint_0-11.py311.1.nbc")):
    """A generated module's source (header and a body) and its compiled files, all ``age`` s old."""
    path = directory / f"{kernel_files.PREFIX}{key}.py"
    path.write_text("\n".join(kernel_files.header(generator, "-1,0|p0m")) + "\nimport numba as nb\n")
    files = [path]
    for name in compiled:
        (directory / "__pycache__").mkdir(exist_ok=True)
        files.append(directory / "__pycache__" / f"{path.stem}.{name}")
        files[-1].write_bytes(b"\0")
    stamp = time.time() - age
    for file in files:
        os.utime(file, (stamp, stamp))
    return files


def test_only_stale_modules_of_other_generators_go_with_their_compiled_files(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNID_KERNEL_DIR", str(tmp_path))
    stale = _module(tmp_path, "a" * 20, OLD, WEEK + 60)
    recent = _module(tmp_path, "b" * 20, OLD, 3600)  # another version, written this week
    touched = _module(tmp_path, "c" * 20, OLD, WEEK + 60)
    os.utime(touched[2])  # compiled again just now
    current = _module(tmp_path, "d" * 20, NEW, 10 * WEEK)
    foreign = tmp_path / f"{kernel_files.PREFIX}{'e' * 20}.py"  # our name, not our header
    foreign.write_text("x = 1\n")
    other = tmp_path / "notes.txt"
    other.write_text("mine\n")
    for path in (foreign, other):
        os.utime(path, (0, 0))

    module = kernel_files.load("value = 42\n", "f" * 20, NEW)  # a new module: written, imported, old ones cleaned
    assert module.value == 42
    assert not any(path.exists() for path in stale)
    for path in recent + touched + current + [foreign, other]:
        assert path.exists(), path
    assert not list(tmp_path.glob(".*.stale")) and not list(tmp_path.glob(".*.tmp"))

    again = _module(tmp_path, "1" * 20, OLD, WEEK + 60)  # stale, but nothing new is written
    kernel_files.load("value = 42\n", "f" * 20, NEW)
    assert all(path.exists() for path in again)
    assert kernel_files.remove_stale(tmp_path, NEW) == 1 and not any(path.exists() for path in again)


def test_a_module_in_use_is_marked_and_a_removal_during_its_import_is_survived(tmp_path, monkeypatch):
    """Loading from Numba's cache changes no file: an import marks the module's compiled index as
    used (never its source, Numba's cache key), so a module used daily is never stale. A module
    another process renames away while this one imports it is written again and imported; a
    dead process's temporary files go after a week."""
    monkeypatch.setenv("DYNID_KERNEL_DIR", str(tmp_path))
    key = "2" * 20
    text = "\n".join(kernel_files.header(OLD, "-1,0|p0m")) + "\nvalue = 7\n"
    files = _module(tmp_path, key, OLD, WEEK + 60)
    files[0].write_text(text)
    os.utime(files[0], (time.time() - WEEK - 60,) * 2)
    source_stamp = files[0].stat().st_mtime
    assert kernel_files.load(text, key, OLD).value == 7
    assert files[0].stat().st_mtime == source_stamp and time.time() - files[1].stat().st_mtime < 60
    assert kernel_files.stale_modules(tmp_path, NEW) == []

    real = kernel_files.importlib.util.spec_from_file_location
    calls = []

    def removed_once(name, path):  # another process takes the file away just before the import
        calls.append(path)
        if len(calls) == 1:
            os.unlink(path)
        return real(name, path)

    monkeypatch.setattr(kernel_files.importlib.util, "spec_from_file_location", removed_once)
    assert kernel_files.load("value = 8\n", "3" * 20, NEW).value == 8 and len(calls) == 2

    dead = [tmp_path / f".{kernel_files.PREFIX}{'4' * 20}.123.tmp", tmp_path / f".{kernel_files.PREFIX}{'5' * 20}.9.stale"]
    young = tmp_path / f".{kernel_files.PREFIX}{'6' * 20}.77.tmp"
    for path in dead + [young]:
        path.write_text("x")
    for path in dead:
        os.utime(path, (time.time() - WEEK - 60,) * 2)
    kernel_files.remove_stale(tmp_path, NEW)
    assert not any(path.exists() for path in dead) and young.exists()
