"""Bootstrap of the fault injector: this directory goes first on a served process's PYTHONPATH
(``omniqual.deploy.fault_control.injector_env``), so every Python process of the tree (spawned
workers inherit the environment) runs this at start-up. Inert unless OMNIQUAL_FAULT_CONTROL and
OMNIQUAL_FAULT_RECORD are both set; then it loads the injector, and in any case runs the
``sitecustomize`` it shadows, if there is one."""

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _start() -> None:
    if not (os.environ.get("OMNIQUAL_FAULT_CONTROL") and os.environ.get("OMNIQUAL_FAULT_RECORD")):
        return
    try:
        try:
            from omniqual.deploy.fault_injector import hooks
        except ImportError:  # omniqual not installed in the server's Python: load it from here
            sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(_HERE)))))
            from omniqual.deploy.fault_injector import hooks
        hooks.install()
    except Exception as exc:  # never break the server's start-up; no LOADED record says it
        sys.stderr.write(f"omniqual fault injector not loaded: {type(exc).__name__}: {exc}\n")


def _chain() -> None:
    others = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_start()
_chain()
