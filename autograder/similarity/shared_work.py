"""Run ``make(i)`` for every ``i`` of a range on every core the process may use, results in order.

Each submission's side of its pairs depends on the class's index and on that
submission only, and at 1,000 submissions the sides are most of the ranking's
time: the process forks a helper per further core (the index is shared by the
fork, not copied), and it and its helpers take the next few indices from a
shared counter until none is left, so a core slowed by other work takes fewer.
A helper sends its results back pickled, a few at a time as it makes them, and leaves. Where fork is not
available, or a helper fails, the work (or the failed helper's share) is done
in this process: the results are the ones one process makes, in the same
order.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Indices a process takes from the counter at a time: few enough that the cores finish together.
_TAKEN_AT_ONCE = 8


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:            # not on Linux
        return os.cpu_count() or 1


def shared_map(make: Callable[[int], T], count: int, workers: int | None = None) -> list[T]:
    """``[make(i) for i in range(count)]``, computed by this process and ``workers - 1`` forked helpers
    (default: one per further core)."""
    workers = cores() if workers is None else workers
    if workers <= 1 or count < 2 * _TAKEN_AT_ONCE or "fork" not in multiprocessing.get_all_start_methods():
        return [make(i) for i in range(count)]
    context = multiprocessing.get_context("fork")
    counter = context.Value("l", 0)
    helpers: list = []
    made: dict[int, T] = {}
    try:
        helpers = fork_helpers(context, workers - 1, lambda sending: (make, count, counter, sending), _helper)
        for i in claimed(counter, count, _TAKEN_AT_ONCE):
            made[i] = make(i)
            _receive(helpers, made, wait=False)
        _receive(helpers, made, wait=True)
    finally:
        stop_helpers(helpers)
    return [made[i] if i in made else make(i) for i in range(count)]


def fork_helpers(context, count: int, arguments: Callable[[object], tuple], target: Callable[..., None]) -> list:
    """Up to ``count`` forked helpers running ``target(*arguments(sending))``, each as (process, the end this
    process receives on). Fewer when no process is left to fork, or when this one is a daemon (none may)."""
    helpers: list = []
    try:
        for _ in range(count):
            receiving, sending = context.Pipe(duplex=False)
            process = context.Process(target=target, args=arguments(sending), daemon=True)
            try:
                process.start()
            except (OSError, AssertionError):
                receiving.close()
                break
            finally:
                sending.close()
            helpers.append((process, receiving))
    except BaseException:
        stop_helpers(helpers)         # no pipe left to make: the helpers started so far do not outlive the error
        raise
    return helpers


def stop_helpers(helpers: list) -> None:
    """Close every helper's pipe and wait for it; one still working (after an error here) is killed."""
    for process, receiving in helpers:
        receiving.close()
        if process.is_alive():
            process.kill()
        process.join()


def _receive(helpers: list, made: dict, wait: bool) -> None:
    """Read what the helpers have sent: each message is one take of results, or ``None`` when a helper is
    done. Read as they come (``wait`` false: only what is there), so that no helper waits on a full pipe and
    no large message is held at once. A helper that died is dropped: what it took is made by the caller."""
    for entry in list(helpers):
        process, receiving = entry
        try:
            while wait or receiving.poll():
                message = pickle.loads(receiving.recv_bytes())
                if message is None:
                    break
                made.update(message)
            else:
                continue
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        helpers.remove(entry)
        receiving.close()
        process.join()


def claimed(counter, total: int, at_once: int):
    """Indices this process takes from the shared ``counter``, ``at_once`` at a time, until none is left."""
    while True:
        with counter.get_lock():
            start = counter.value
            counter.value = start + at_once
        if start >= total:
            return
        yield from range(start, min(start + at_once, total))


def _helper(make: Callable[[int], T], count: int, counter, sending) -> None:
    """A forked helper: make the results it takes, send them back, and leave."""
    try:
        take: dict[int, T] = {}
        for i in claimed(counter, count, _TAKEN_AT_ONCE):
            take[i] = make(i)
            if len(take) == _TAKEN_AT_ONCE:
                sending.send_bytes(pickle.dumps(take, protocol=pickle.HIGHEST_PROTOCOL))
                take = {}
        if take:
            sending.send_bytes(pickle.dumps(take, protocol=pickle.HIGHEST_PROTOCOL))
        sending.send_bytes(pickle.dumps(None))
    finally:
        sending.close()
        os._exit(0)                   # no exit handlers, no flushing the parent's buffers twice
