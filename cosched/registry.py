"""Build things registered by name ("module:factory" strings load lazily, so the CLI starts
fast), or named by a plug-in: ``FILE.py:Class`` (a Python file of the user's) or the name of an
entry point in the registry's group (``cosched.schedulers``, ``cosched.strategies``,
``cosched.hybrid_mechanisms``: the packaging convention, declared in the plug-in package's
``pyproject.toml``)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from cosched.errors import InputError, message_line
from cosched.names import canonical, unknown_name

__all__ = ["build", "refuse_unknown_options", "plugin", "PLUGIN_GROUPS"]

# the entry-point group a plug-in package declares, per kind of thing
PLUGIN_GROUPS = {
    "scheduler": "cosched.schedulers",
    "strategy": "cosched.strategies",
    "mechanism": "cosched.hybrid_mechanisms",
}


def build(registry: Mapping[str, str | Callable], name: str, kind: str, **options):
    """Call the factory registered as `name` (or the plug-in it names), passing only the options
    its `OPTIONS` attribute lists.

    An unknown name is bad input: InputError listing the known names.
    """
    factory = registry.get(canonical(name, registry)) or plugin(name, kind)
    if factory is None:
        raise InputError(unknown_name(name, sorted(registry), kind))
    factory = _load(factory)
    accepted = getattr(factory, "OPTIONS", None)
    if accepted is not None:
        options = {
            key: value for key, value in options.items() if key in accepted and value is not None
        }
    return factory(**options)


def refuse_unknown_options(
    registry: Mapping[str, str | Callable], name: str, kind: str, options: Mapping[str, object]
) -> None:
    """Raise InputError for an option of `options` that no factory of `registry` takes (a
    misspelling), naming the options `name` takes.

    An option of another factory that `name` does not take passes (`build` drops it), so one set of
    options can go to any of them; a factory without ``OPTIONS`` takes anything. An unknown `name`
    is left to `build`.
    """
    name = canonical(name, registry)
    if name not in registry or not options:
        return
    accepted = getattr(_load(registry[name]), "OPTIONS", None)
    foreign = [key for key in options if accepted is not None and key not in accepted]
    if not foreign:
        return
    # the error path only: loads every factory of the registry
    known = set().union(*(getattr(_load(f), "OPTIONS", None) or () for f in registry.values()))
    unknown = [key for key in foreign if key not in known]
    if unknown:
        raise InputError(
            f"unknown option {unknown[0]!r} of {kind} {name!r}; it takes: "
            f"{', '.join(sorted(accepted or ())) or 'no options'}",
            field=unknown[0],
        )


def _load(factory: str | Callable) -> Callable:
    """The factory itself: a "module:attribute" string is imported on first use."""
    if isinstance(factory, str):
        module, attribute = factory.split(":")
        return getattr(importlib.import_module(module), attribute)
    return factory


def plugin(name: str, kind: str) -> Callable | None:
    """The factory a plug-in `name` stands for, or None if it names none: ``FILE.py:Attribute``
    loads the attribute of that Python file, anything else is looked up among the entry points of
    the group of `kind` (PLUGIN_GROUPS). A plug-in that fails to load is bad input: one InputError
    naming the file or the entry point."""
    path, colon, attribute = name.rpartition(":")
    if colon and path.endswith(".py"):
        return _from_file(Path(path), attribute)
    group = PLUGIN_GROUPS.get(kind)
    if group is None:
        return None
    from importlib.metadata import entry_points

    for entry in entry_points(group=group):
        if entry.name == name:
            try:
                return entry.load()
            except Exception as error:  # the plug-in's own code: any failure is its bad input
                raise InputError(
                    _error_line(error), source=f"entry point {name} ({group})"
                ) from None
    return None


def _from_file(path: Path, attribute: str) -> Callable:
    """`attribute` of the Python file at `path`, loaded once per file (as module
    ``cosched_plugin_<hash of the path>``)."""
    if not path.is_file():
        raise InputError("no such plug-in file", source=str(path))
    resolved = path.resolve()
    module_name = "cosched_plugin_" + hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, resolved)
        assert spec is not None and spec.loader is not None  # a .py file always has a loader
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except SyntaxError as error:
            raise InputError(
                f"syntax error: {error.msg}", source=str(path), line=error.lineno
            ) from None
        except Exception as error:  # the plug-in's own code: any failure is its bad input
            raise InputError(_error_line(error), source=str(path)) from None
        sys.modules[module_name] = module  # worker processes and later look-ups reuse it
    factory = getattr(module, attribute, None)
    if not attribute or not callable(factory):
        raise InputError(f"defines no class or function {attribute!r}", source=str(path))
    return factory


def _error_line(error: BaseException) -> str:
    """A plug-in's exception as one line: its type and its message (`message_line`)."""
    text = message_line(str(error))
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
