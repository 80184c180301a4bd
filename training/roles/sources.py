"""Rebuild and check the extra sessions folder that training/roles/sources.json describes.

  python training/roles/sources.py check [DIR]               # every listed file is there, byte for byte
  python training/roles/sources.py rebuild GIT_DIR OWNER/REPO [DIR]

The transcripts are the repository owners' own: they were published with the Entire CLI on the
branch ``entire/checkpoints/v1`` or as one ref ``refs/entire/checkpoints/<xx>/<id>`` per
checkpoint, and are not copied into this repository. To rebuild, clone the repository with those
refs (``git clone --bare https://github.com/OWNER/REPO r.git && git -C r.git fetch origin
'+refs/heads/entire/*:refs/heads/entire/*' '+refs/entire/*:refs/entire/*'``), then ``rebuild``
writes each listed file (``git cat-file`` of commit:path) and the repository's LICENSE next to
them, and refuses a file whose sha256 differs. DIR defaults to ../extra-sessions next to the checkout.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.abspath(os.path.join(HERE, "..", "..", "..", "extra-sessions"))


def load() -> dict[str, object]:
    with open(os.path.join(HERE, "sources.json"), encoding="utf-8") as fh:
        return dict(json.load(fh))


def sessions(src: dict[str, object]) -> list[dict[str, str]]:
    return [dict(s) for s in src["sessions"]]  # type: ignore[attr-defined]


def check(folder: str) -> int:
    bad = 0
    for s in sessions(load()):
        path = os.path.join(folder, s["file"])
        if not os.path.exists(path):
            print(f"missing  {s['file']}")
            bad += 1
            continue
        with open(path, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
        if digest != s["sha256"]:
            print(f"differs  {s['file']}")
            bad += 1
    print("all files present and unchanged" if not bad else f"{bad} file(s) missing or changed")
    return 1 if bad else 0


def git_bytes(git_dir: str, spec: str) -> bytes:
    return subprocess.run(["git", "-C", git_dir, "cat-file", "-p", spec], check=True, capture_output=True).stdout


def rebuild(git_dir: str, repo: str, folder: str) -> int:
    src = load()
    about = src["repositories"][repo]  # type: ignore[index]
    wrote = 0
    for s in sessions(src):
        if s["repo"] != repo:
            continue
        data = git_bytes(git_dir, f"{s['commit']}:{s['path']}")
        if hashlib.sha256(data).hexdigest() != s["sha256"]:
            print(f"refused  {s['file']}: sha256 differs from sources.json", file=sys.stderr)
            return 1
        out = os.path.join(folder, s["file"])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as fh:
            fh.write(data)
        wrote += 1
        lic = git_bytes(git_dir, f"{about['license_read_at']['commit']}:{about['license_file']}")
        with open(os.path.join(os.path.dirname(out), "LICENSE"), "wb") as fh:
            fh.write(lic)
    print(f"wrote {wrote} session(s) of {repo} under {folder}")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"]:
        return check(argv[1] if len(argv) > 1 else DEFAULT_DIR)
    if argv[:1] == ["rebuild"] and len(argv) >= 3:
        return rebuild(argv[1], argv[2], argv[3] if len(argv) > 3 else DEFAULT_DIR)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
