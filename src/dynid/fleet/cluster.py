"""The Dask client of a fleet command: a LocalCluster started and stopped here, or a cluster by address.

    with dask_client(scheduler=None, workers=2) as client:   # LocalCluster: 2 worker processes
        ...
    with dask_client("tcp://10.0.0.5:8786") as client:        # a running cluster (clear error
        ...                                                   # after connect_timeout s otherwise)

LocalCluster workers are separate processes (one thread each: the identification of one
file is already pipelined over two threads, and processes sidestep the GIL), watched by a
nanny that restarts a worker that dies; the scheduler then runs the lost tasks again.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os

from dynid.errors import ClusterError


# Our LocalCluster's processes (measured, docs/fleet.md "Where the overhead went"):
# - Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in its workers, and setting any of glibc's
#   malloc thresholds turns off glibc's dynamic mmap threshold, so every array above 128 kB
#   (each streaming chunk's columns) is mmap'ed, faulted in page by page and unmapped again:
#   10x the page faults and +60 % CPU per file against the same call in a plain process.
#   Unset (None), the workers allocate as 'dynid identify' does;
# - the event-loop health check every 20 ms, the system monitor every 0.5 s and the memory
#   monitor every 0.1 s cost an idle LocalCluster of 2 workers ~0.06 CPU s per second (5x less
#   with these intervals), and the statistical profiler samples every 10 ms: off.
LOCAL_WORKER_CONFIG = {"distributed.worker.profile.enabled": False,
                       "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                       "distributed.admin.tick.interval": "1s",
                       "distributed.admin.system-monitor.interval": "2s",
                       "distributed.worker.memory.monitor-interval": "500ms"}


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def dashboard_text(client) -> str:
    """The dashboard address, or why there is none (Dask serves it only with bokeh installed)."""
    if importlib.util.find_spec("bokeh") is None:
        return "off (Dask serves its dashboard when 'bokeh' is installed)"
    return str(client.dashboard_link)


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None, connect_timeout: float = 5.0,
                memory_limit: str | int | None = "auto"):
    """A connected ``distributed.Client`` (module docstring); closed (and the LocalCluster
    stopped) on exit."""
    import dask
    from distributed import Client, LocalCluster

    cluster, settings = None, contextlib.ExitStack()
    if scheduler:
        check_address(scheduler)
        client = Client.__new__(Client)
        try:
            client.__init__(scheduler, timeout=connect_timeout, set_as_default=False)
        except Exception as exc:  # noqa: BLE001 - whatever answered (or did not), it is no Dask scheduler
            _discard(client)
            raise ClusterError(f"--scheduler {scheduler}: no Dask scheduler answered within {connect_timeout:g} s "
                               f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})") from None
        try:
            client.wait_for_workers(1, timeout=connect_timeout)
        except Exception as exc:  # noqa: BLE001 - TimeoutError, or the connection lost meanwhile
            with contextlib.suppress(Exception):
                client.close(timeout=connect_timeout)
            _discard(client)
            raise ClusterError(f"--scheduler {scheduler}: the scheduler answers but no worker joined within "
                               f"{connect_timeout:g} s") from exc
    else:
        count = workers or default_workers()
        if count < 1:
            raise ClusterError(f"--workers {count}: need at least one worker")
        settings.enter_context(dask.config.set(LOCAL_WORKER_CONFIG))
        cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.ERROR, memory_limit=memory_limit)
        client = Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        settings.close()


def check_address(scheduler: str) -> None:
    """Refuse an address that names no Dask scheduler before trying to connect: an unknown scheme
    (``http://``), no port, an empty host."""
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend

    try:
        scheme, _ = parse_address(scheduler)
        backend = get_backend(scheme)
        if scheme != "inproc":
            host, _ = backend.get_address_host_port(scheduler)
            if not host:
                raise ValueError("no host")
    except (ValueError, TypeError) as exc:
        raise ClusterError(f"--scheduler {scheduler}: not the address of a Dask scheduler ({exc}); expected "
                           "tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786") from None


def _discard(client) -> None:
    """A Client whose constructor failed: mark it closed and stop its event loop thread, so that its
    ``__del__`` neither waits for a scheduler that is not there nor prints a traceback at exit."""
    with contextlib.suppress(Exception):
        client.status = "closed"
    with contextlib.suppress(Exception):
        client._loop_runner.stop()


def worker_peak_memory(client) -> dict[str, float]:
    """Peak resident memory of each worker process so far [MB] (Linux VmHWM)."""
    return client.run(_vm_hwm_mb)


def _vm_hwm_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
