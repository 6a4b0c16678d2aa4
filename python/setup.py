"""Builds the toolenv package, generating its gRPC stubs from ../proto.

The stubs (toolenv/v1/toolenv_pb2.py, toolenv_pb2_grpc.py) are written into
the build directory only, so the repository never holds a copy that could
drift from proto/.
"""

import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def proto_dir():
    """proto/ of the repository this package is built from (or $TOOLENV_PROTO)."""
    candidates = [Path(os.environ["TOOLENV_PROTO"])] if os.environ.get("TOOLENV_PROTO") else []
    candidates.append(HERE.parent / "proto")
    for candidate in candidates:
        if (candidate / "toolenv" / "v1" / "toolenv.proto").is_file():
            return candidate
    raise SystemExit(
        "error: toolenv/v1/toolenv.proto not found in "
        + " or ".join(str(c) for c in candidates)
        + ": build the package from a checkout of the repository (pip install ./python), or set TOOLENV_PROTO"
    )


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        from grpc_tools import protoc

        proto = proto_dir()
        out = Path(self.build_lib)
        (out / "toolenv" / "v1").mkdir(parents=True, exist_ok=True)
        source = proto / "toolenv" / "v1" / "toolenv.proto"
        status = protoc.main(["protoc", f"-I{proto}", f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}", str(source)])
        if status != 0:
            raise SystemExit(f"error: generating stubs from {source} failed (protoc exit {status})")
        (out / "toolenv" / "v1" / "__init__.py").write_text('"""Generated from proto/toolenv/v1/toolenv.proto at build time."""\n')


setup(cmdclass={"build_py": BuildWithStubs})
