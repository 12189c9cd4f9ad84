"""Write the API reference's lists of public names from ``__all__``.

``docs/api.rst`` includes the files written here, so a name exported by
``skdpopt`` or ``skdpopt.accounting`` is documented without editing the
reference by hand.
"""

import inspect

import skdpopt
import skdpopt.accounting


def _autosummary(module, names, template):
    lines = [f".. currentmodule:: {module.__name__}", "",
             ".. autosummary::", "   :toctree: generated/", f"   :template: {template}",
             ""]
    lines += [f"   {name}" for name in names]
    return "\n".join(lines) + "\n"


def write_api_lists(folder):
    """Write one autosummary list per section into ``folder`` (the
    documentation root, so that ``:toctree: generated/`` means the same
    folder when the lists are scanned and when they are included); return
    the file names."""
    estimators = [name for name in sorted(skdpopt.__all__)
                  if inspect.isclass(getattr(skdpopt, name))
                  and hasattr(getattr(skdpopt, name), "fit")]
    records = [name for name in sorted(skdpopt.__all__) if name not in estimators]
    accounting = sorted(skdpopt.accounting.__all__)
    accounting_classes = [n for n in accounting
                          if inspect.isclass(getattr(skdpopt.accounting, n))
                          and n not in records]
    accounting_functions = [n for n in accounting
                            if inspect.isfunction(getattr(skdpopt.accounting, n))]
    sections = {
        "_api_estimators.rst": _autosummary(skdpopt, estimators, "class.rst"),
        "_api_records.rst": _autosummary(skdpopt, records, "class.rst"),
        "_api_accounting_classes.rst": _autosummary(skdpopt.accounting,
                                               accounting_classes, "class.rst"),
        "_api_accounting_functions.rst": _autosummary(skdpopt.accounting,
                                                 accounting_functions,
                                                 "function.rst"),
    }
    paths = []
    for name, text in sections.items():
        path = folder / name
        # Rewrite only on change, so Sphinx's incremental builds stay quiet.
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        paths.append(name)
    return paths
