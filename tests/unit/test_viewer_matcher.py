"""The viewer's search highlighting (``matcher`` in kenning/viewer/static/dom.js), run by node: a
word found inside a run of Chinese, Japanese or Korean text is marked there, and only the word;
English words keep their word-start, stemmed marking."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

NODE = shutil.which("node")
DOM = Path(__file__).resolve().parents[2] / "kenning" / "viewer" / "static" / "dom.js"

CASES = [
    (["数据库"], "我们把数据库迁移到了新的服务器", ["数据库"]),
    (["上线"], "周五上线之前要跑完整的回归测试", ["上线"]),
    (["データベース"], "新しいデータベースへ移行した", ["データベース"]),
    (["데이터베이스"], "데이터베이스를 새 서버로 옮겼다", ["데이터베이스"]),
    (["数据", "数据库"], "数据库", ["数据库"]),              # the longer word first
    (["ledgers"], "The ledger totals; subledger", ["ledger"]),  # stemmed, at a word start only
    (["ledgers", "上线"], "ledger 上线了", ["ledger", "上线"]),
    (["k8s"], "k8s pods and xk8s", ["k8s"]),
    ([], "anything", []),
]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_matcher_marks_words_inside_cjk_runs(tmp_path: Path) -> None:
    (tmp_path / "dom.mjs").write_text(DOM.read_text(encoding="utf-8"), encoding="utf-8")
    script = tmp_path / "run.mjs"
    script.write_text(
        "import {matcher} from './dom.mjs';\n"
        f"const cases = {json.dumps([[t, s] for t, s, _ in CASES], ensure_ascii=False)};\n"
        "const out = cases.map(([terms, text]) => { const rx = matcher(terms); "
        "return rx ? [...text.matchAll(rx)].map((m) => m[0]) : []; });\n"
        "console.log(JSON.stringify(out));\n", encoding="utf-8")
    assert NODE is not None
    r = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [want for _t, _s, want in CASES]
