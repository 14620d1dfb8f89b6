"""Every public name of the package has a docstring and a type stub (issue 26 item 1): names
implemented in Rust are declared in ``_native.pyi`` (with each public method and property),
names implemented in Python carry inline annotations (PEP 561, ``py.typed``)."""

import ast
import inspect
import pathlib

import tessera
import tessera.programs
import tessera.sim

PKG = pathlib.Path(tessera.__file__).parent


def stub_entries():
    tree = ast.parse((PKG / "_native.pyi").read_text())
    entries = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            entries[node.name] = {
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AnnAssign))
            }
        elif isinstance(node, ast.FunctionDef):
            entries[node.name] = set()
    return entries


def public_names():
    for mod in (tessera, tessera.sim, tessera.programs):
        for name in mod.__all__:
            yield mod, name, getattr(mod, name)


def test_package_is_typed():
    assert (PKG / "py.typed").exists() and (PKG / "_native.pyi").exists()


def test_every_public_name_has_a_docstring_and_a_stub():
    stubs = stub_entries()
    for mod, name, obj in public_names():
        if inspect.ismodule(obj):
            assert obj.__doc__, name
            continue
        assert obj.__doc__ and obj.__doc__.strip(), f"{mod.__name__}.{name} has no docstring"
        native = getattr(obj, "__module__", "") in ("tessera._native", "_native")
        if native:
            assert name in stubs, f"{name} is missing from _native.pyi"
        else:
            assert inspect.getsourcefile(obj).endswith(".py")
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not callable(member) and not isinstance(
                    member, (property,)
                ) and type(member).__name__ not in ("getset_descriptor",):
                    continue
                doc = getattr(member, "__doc__", None)
                assert doc and doc.strip(), f"{name}.{attr} has no docstring"
                if native:
                    assert attr in stubs[name], f"{name}.{attr} is missing from _native.pyi"
        elif callable(obj) and not native:
            sig = inspect.signature(obj)
            assert sig.return_annotation is not inspect.Signature.empty, name


def test_stubs_name_only_what_exists():
    native = tessera._native
    for name, members in stub_entries().items():
        assert hasattr(native, name), f"_native.pyi declares {name}, which the module lacks"
        for m in members:
            assert hasattr(getattr(native, name), m), f"_native.pyi declares {name}.{m}"
