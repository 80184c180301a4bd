"""Words that name the same thing in coding work: abbreviations, long forms, and the usual
Chinese, Japanese and Korean words for them. Our own short list, matched both ways.

A query word found here is searched as any of its group (``"k8s"`` also finds "Kubernetes",
``数据库`` also finds "database"): recall without embeddings. Only words that mean the same in
practically every coding context are listed; a word that also means something else commonly
(``ts``, ``pg``, ``var``, ``spec``, ``库``) is left out, because the prompt context gives what it finds
to the agent as relevant memory.
"""

from __future__ import annotations

import functools

from kenning.search import cjk

GROUPS: tuple[tuple[str, ...], ...] = (
    ("kubernetes", "k8s"),
    ("database", "db", "数据库", "データベース", "데이터베이스"),
    ("configuration", "config", "cfg", "配置", "設定", "설정"),
    ("repository", "repo", "仓库", "リポジトリ", "저장소"),
    ("authentication", "auth", "authn", "认证", "認証", "인증"),
    ("authorization", "authz", "auth", "授权", "認可"),
    ("environment", "env", "环境", "環境", "환경"),
    ("dependencies", "dependency", "deps", "依赖", "依存関係", "의존성"),
    ("deploy", "deployment", "上线", "部署", "发布", "デプロイ", "배포"),
    ("release", "发布", "リリース", "릴리스"),
    ("documentation", "docs", "文档", "ドキュメント", "문서"),
    ("directory", "dir", "目录", "ディレクトリ", "디렉터리"),
    ("function", "func", "函数", "関数", "함수"),
    ("parameter", "param", "参数", "パラメータ", "매개변수"),
    ("argument", "arg"),
    ("message", "msg", "消息", "メッセージ", "메시지"),
    ("error", "err", "错误", "报错", "エラー", "오류", "에러"),
    ("application", "app"),
    ("administrator", "admin", "管理员"),
    ("development", "dev", "开发", "開発", "개발"),
    ("production", "prod", "生产环境", "本番", "운영"),
    ("specification", "规范", "仕様"),
    ("temporary", "temp", "tmp", "临时"),
    ("library", "lib"),
    ("package", "pkg"),
    ("internationalization", "i18n"),
    ("localization", "l10n"),
    ("accessibility", "a11y"),
    ("pull request", "pr"),
    ("command line", "cli", "命令行"),
    ("regular expression", "regex", "regexp", "正则", "正規表現", "정규식"),
    ("implementation", "impl", "实现", "実装", "구현"),
    ("variable", "变量", "変数", "변수"),
    ("utility", "util", "utils"),
    ("performance", "perf", "性能", "パフォーマンス", "성능"),
    ("statistics", "stats"),
    ("certificate", "cert", "证书", "証明書", "인증서"),
    ("credentials", "creds", "凭据"),
    ("migration", "迁移", "マイグレーション", "移行", "마이그레이션"),
    ("server", "服务器", "サーバー", "サーバ", "서버"),
    ("cache", "缓存", "キャッシュ", "캐시"),
    ("javascript", "js"),
    ("postgresql", "postgres"),
    ("timeout", "超时", "タイムアウト", "타임아웃"),
    ("permission", "权限", "権限", "권한"),
    ("rollback", "回滚", "ロールバック", "롤백"),
    ("refactor", "refactoring", "重构", "リファクタリング", "리팩터링"),
    ("commit", "提交", "コミット", "커밋"),
    ("branch", "分支", "ブランチ", "브랜치"),
    ("test", "测试", "テスト", "테스트"),
)


def _build() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for group in GROUPS:
        for w in group:
            alts = out.setdefault(w, [])
            alts.extend(x for x in group if x != w and x not in alts)
    return {w: tuple(a) for w, a in out.items()}


_ALTS = _build()
# The CJK words of the table, longest first: found inside a run of CJK text (no spaces there).
CJK_WORDS = tuple(sorted((w for w in _ALTS if cjk.has_cjk(w)), key=len, reverse=True))


@functools.lru_cache(maxsize=8192)
def key(word: str) -> str | None:
    """The table's spelling of ``word`` (any case, a plural), or None when it is not listed."""
    w = word.lower()
    if w in _ALTS:
        return w
    for end, repl in (("ies", "y"), ("es", ""), ("s", "")):
        if len(w) > len(end) + 1 and w.endswith(end) and w[:-len(end)] + repl in _ALTS:
            return w[:-len(end)] + repl
    return None


def alternatives(word: str) -> tuple[str, ...]:
    """The other words for ``word`` (empty when it is not listed)."""
    k = key(word)
    return _ALTS[k] if k is not None else ()


def group(word: str) -> tuple[str | None, tuple[str, ...]]:
    """(the table's spelling of ``word`` or None, the other words for it)."""
    k = key(word)
    return (k, _ALTS[k]) if k is not None else (None, ())


def in_run(run: str) -> list[tuple[int, str]]:
    """(offset, word) of the table's CJK words inside the CJK run ``run``, longest first where
    two overlap."""
    taken = [False] * len(run)
    out: list[tuple[int, str]] = []
    for w in CJK_WORDS:
        at = run.find(w)
        while at >= 0:
            if not any(taken[at:at + len(w)]):
                out.append((at, w))
                for i in range(at, at + len(w)):
                    taken[i] = True
            at = run.find(w, at + 1)
    return sorted(out)
