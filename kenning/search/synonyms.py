"""Words that name the same thing in coding work: abbreviations, long forms, and the usual
Chinese, Japanese and Korean words for them, and the French, German, Spanish, Portuguese, Italian, Turkish and
Russian ones where the word keeps its form. Our own short list, matched both ways; a word of several words
("base de données", "end-to-end") is found in a prompt as a whole.

A query word found here is searched as any of its group (``"k8s"`` also finds "Kubernetes",
``数据库`` also finds "database"): recall without embeddings. Only words that mean the same in
practically every coding context are listed; a word that also means something else commonly
(``ts``, ``pg``, ``var``, ``spec``, ``库``) is left out, because the prompt context gives what it finds
to the agent as relevant memory.
"""

from __future__ import annotations

import functools
import re

from kenning.search import cjk

GROUPS: tuple[tuple[str, ...], ...] = (
    ("kubernetes", "k8s", "kube"),
    ("database", "db", "数据库", "データベース", "데이터베이스", "datenbank", "base de données", "base de datos",
     "banco de dados", "veritabanı", "база данных", "бд"),
    ("configuration", "config", "cfg", "配置", "設定", "설정", "konfiguration", "configuración", "configuração",
     "configurazione", "yapılandırma", "конфигурация", "конфиг"),
    ("repository", "repo", "仓库", "リポジトリ", "저장소"),
    ("authentication", "auth", "authn", "认证", "認証", "인증"),
    ("authorization", "authz", "auth", "授权", "認可"),
    ("environment", "env", "环境", "環境", "환경", "umgebung", "environnement", "entorno", "окружение"),
    ("dependencies", "dependency", "deps", "依赖", "依存関係", "의존성", "abhängigkeiten", "abhängigkeit",
     "dépendances", "dépendance", "dependencias", "dependencia", "dependências", "dependência", "dipendenze",
     "зависимости"),
    ("deploy", "deployment", "上线", "部署", "发布", "デプロイ", "배포", "déploiement", "despliegue", "деплой"),
    ("release", "发布", "リリース", "릴리스"),
    ("documentation", "docs", "文档", "ドキュメント", "문서", "dokumentation", "documentación", "documentação",
     "documentazione", "dokümantasyon", "документация"),
    ("directory", "dir", "目录", "ディレクトリ", "디렉터리", "verzeichnis", "répertoire", "directorio", "diretório",
     "директория"),
    ("function", "func", "函数", "関数", "함수"),
    ("parameter", "param", "参数", "パラメータ", "매개변수"),
    ("argument", "arg"),
    ("message", "msg", "消息", "メッセージ", "메시지"),
    ("error", "err", "错误", "报错", "エラー", "오류", "에러", "fehler", "erreur", "errore", "erro", "ошибка"),
    ("application", "app"),
    ("administrator", "admin", "管理员"),
    ("development", "dev", "开发", "開発", "개발"),
    ("production", "prod", "生产环境", "本番", "운영", "produktion", "producción", "produção", "produzione", "прод",
     "продакшен"),
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
    ("performance", "perf", "性能", "パフォーマンス", "성능", "leistung", "rendimiento", "desempenho", "prestazioni",
     "производительность"),
    ("statistics", "stats"),
    ("certificate", "cert", "证书", "証明書", "인증서"),
    ("credentials", "creds", "凭据"),
    ("migration", "迁移", "マイグレーション", "移行", "마이그레이션", "migración", "migração", "migrazione",
     "миграция"),
    ("server", "服务器", "サーバー", "サーバ", "서버", "serveur", "servidor", "сервер", "sunucu"),
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
    ("continuous integration", "ci", "持续集成", "継続的インテグレーション"),
    ("end-to-end", "e2e", "端到端"),
    ("infrastructure", "infra", "基础设施", "インフラ", "인프라"),
    ("asynchronous", "async", "异步", "非同期", "비동기"),
    ("frontend", "front-end", "前端", "フロントエンド", "프론트엔드"),
    ("backend", "back-end", "后端", "バックエンド", "백엔드"),
    ("container", "容器", "コンテナ", "컨테이너"),
    ("log", "日志", "ログ", "로그"),
    ("password", "passwd", "密码", "パスワード", "비밀번호", "passwort", "mot de passe", "contraseña", "senha",
     "пароль"),
    ("message queue", "mq", "消息队列"),
    ("request", "req", "请求", "リクエスト", "요청"),
    ("response", "resp", "响应", "レスポンス", "응답"),
    ("user interface", "ui", "用户界面"),
    ("query", "查询", "クエリ", "쿼리"),
    ("virtual machine", "vm", "虚拟机", "仮想マシン", "가상 머신"),
    ("single sign-on", "sso", "单点登录"),
    ("large language model", "llm", "大模型", "大语言模型"),
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


# The table's words of several words ("pull request", "base de données", "end-to-end"), longest first:
# a text's words are split at spaces and hyphens, so these are found in the text as a whole.
_PHRASES = sorted((w for w in _ALTS if (" " in w or "-" in w) and not cjk.has_cjk(w)), key=len, reverse=True)
_PHRASE = re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, _PHRASES)) + r")(?![\w-])", re.IGNORECASE)


def phrases(text: str) -> tuple[list[str], str]:
    """The table's words of several words found in ``text`` (each once, as the table spells it), and
    ``text`` without them."""
    found: list[str] = []

    def take(m: re.Match[str]) -> str:
        w = m.group().lower()
        if w not in found:
            found.append(w)
        return " "

    return found, _PHRASE.sub(take, text)


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
