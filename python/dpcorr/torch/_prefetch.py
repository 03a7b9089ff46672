"""The noise of a step, generated on the CPU by one background thread while the model runs.

The engine asks for step t's noise when its loader issues step t's batch (before the forward
pass) and takes it in ``optimizer.step()``; in between, the library fills the row (ctypes
releases the GIL; so does torch) while the forward and backward passes run. The row is the same
bits whether it is generated in the thread or inline: the generator is the run's one generator,
advanced once per step in step order, and the thread runs exactly the calls the inline path runs
(``NoiseGenerator.next`` into the buffer, then the multiply by the noise scale).

One thread and one job at a time (a queue of length one in practice); the thread holds no
reference to the engine, and stops when the engine is closed or garbage collected
(``weakref.finalize``), or at interpreter exit (daemon).
"""

import queue
import threading
import time


class _Job:
    __slots__ = ("step", "fn", "done", "error", "busy_s")

    def __init__(self, step, fn):
        self.step = step
        self.fn = fn
        self.done = threading.Event()
        self.error = None
        self.busy_s = 0.0


def _loop(jobs):
    while True:
        job = jobs.get()
        if job is None:
            return
        t0 = time.perf_counter()
        try:
            job.fn()
        except BaseException as e:  # handed to the thread that waits for it
            job.error = e
        job.busy_s = time.perf_counter() - t0
        job.fn = None
        job.done.set()


class NoiseWorker:
    """A single daemon thread that runs jobs in submission order."""

    def __init__(self):
        self._jobs = queue.SimpleQueue()
        self._thread = threading.Thread(target=_loop, args=(self._jobs,), daemon=True,
                                        name="dpcorr-noise")
        self._thread.start()

    @property
    def alive(self):
        return self._thread.is_alive()

    def submit(self, step, fn):
        job = _Job(step, fn)
        self._jobs.put(job)
        return job

    def close(self):
        """Lets the queued jobs finish, then stops and joins the thread (idempotent)."""
        if self._thread.is_alive():
            self._jobs.put(None)
            if self._thread is not threading.current_thread():
                self._thread.join()


def done_job(step):
    """A job already done (a row restored from a checkpoint)."""
    job = _Job(step, None)
    job.done.set()
    return job


def wait(job):
    """Waits for a job; returns the seconds waited. Raises the job's error."""
    t0 = time.perf_counter()
    if not job.done.is_set():
        job.done.wait()
    waited = time.perf_counter() - t0
    if job.error is not None:
        raise job.error
    return waited
