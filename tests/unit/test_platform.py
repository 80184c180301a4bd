"""Where Kenning runs, and what it says where it does not."""

from __future__ import annotations

import subprocess
import sys

from kenning.__main__ import unsupported


def test_linux_and_macos_are_supported_windows_is_told_why_not() -> None:
    assert unsupported("linux") is None and unsupported("darwin") is None
    for name in ("win32", "cygwin"):
        said = unsupported(name)
        assert said is not None and "Windows is not supported" in said and "WSL" in said
    assert unsupported("aix") == "aix is not supported (Linux and macOS are)"


def test_the_command_refuses_an_unsupported_platform_with_one_line() -> None:
    code = "import sys; sys.platform = 'win32'; from kenning.__main__ import main; sys.exit(main(['status']))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.startswith("kenning: Windows is not supported") and r.stderr.count("\n") == 1, r.stderr
    assert r.stdout == ""
