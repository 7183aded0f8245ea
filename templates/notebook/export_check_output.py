

def _without_kernel_transport_warning():
    """The export cell checks the zip it wrote in a separate Python process, which starts a kernel
    on this machine's loopback; that kernel's start-up warning about unencrypted TCP says nothing
    about your work, and otter showed it after every export. Its lines are dropped from what that
    process reports; everything else it writes is still shown."""
    import importlib
    import sys
    if "otter" not in sys.modules:     # graded outside the notebook: no export runs there
        return
    try:
        utils = importlib.import_module("otter.check.utils")
    except Exception:
        return
    run = getattr(utils, "run", None)
    if run is None or getattr(run, "drops_transport_warning", False):
        return

    def quieter(*args, **kwargs):
        done = run(*args, **kwargs)
        if isinstance(getattr(done, "stderr", None), bytes):
            done.stderr = b"".join(line for line in done.stderr.splitlines(True)
                                   if b"Kernel is running over TCP without encryption" not in line)
        return done

    quieter.drops_transport_warning = True
    utils.run = quieter


_without_kernel_transport_warning()
