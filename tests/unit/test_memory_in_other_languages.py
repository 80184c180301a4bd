"""A rule and its correction a session later, in the languages our users write in: German, Spanish, Portuguese,
Italian, Turkish and Russian as English, Chinese, French, Japanese and Korean; a correction that has no "always"
in it ("Correction: … uv instead of poetry") is the rule's new version all the same. Written in
Latin letters without accents, German or Spanish is as ASCII as English, and the English grammar of rules
must not be the one that reads it; a correction names what it replaces ("statt poetry", "yerine poetry"), and
the words every rule in a language shares ("wir verwenden …") do not make two rules one. Sentences of our own.
"""

from __future__ import annotations

import pytest

from tests.support.memory_story import Story, Turn, bash, edit, read

# language: (the rule, its correction a session later, an unrelated rule in the same words)
CASES = {
    "en": ("From now on we always manage the Python dependencies with poetry.",
           "Correction: we manage the dependencies with uv instead of poetry.",
           "From now on we always manage the releases with a changelog."),
    "zh": ("以后所有的 Python 依赖都统一用 poetry 来管理。",
           "更正：依赖管理改用 uv，替换 poetry。",
           "以后每次发版都要先更新 changelog。"),
    "de": ("Ab jetzt verwalten wir die Python-Abhaengigkeiten immer mit poetry.",
           "Korrektur: wir verwalten die Abhaengigkeiten ab sofort mit uv statt poetry.",
           "Ab jetzt verwalten wir die Releases immer mit einem Changelog."),
    "es": ("A partir de ahora gestionamos siempre las dependencias con poetry.",
           "Correccion: gestionamos las dependencias con uv en lugar de poetry.",
           "A partir de ahora gestionamos siempre las versiones con un changelog."),
    "pt": ("A partir de agora gerimos sempre as dependencias com poetry.",
           "Correcao: gerimos as dependencias com uv em vez de poetry; nao use mais poetry.",
           "A partir de agora gerimos sempre as versoes com um changelog."),
    "it": ("D'ora in poi gestiamo sempre le dipendenze con poetry.",
           "Correzione: gestiamo le dipendenze con uv invece di poetry.",
           "D'ora in poi gestiamo sempre le versioni con un changelog."),
    "tr": ("Bundan sonra bagimliliklari her zaman poetry ile yonetiyoruz.",
           "Duzeltme: bagimliliklari artik poetry yerine uv ile yonetiyoruz.",
           "Bundan sonra surumleri her zaman bir changelog ile yonetiyoruz."),
    "ru": ("С этого момента всегда управляем зависимостями через poetry.",
           "Поправка: управляем зависимостями через uv вместо poetry.",
           "С этого момента всегда ведём changelog для каждого релиза."),
    "fr": ("Désormais, on gère toujours les dépendances avec poetry.",
           "Correction : on gère les dépendances avec uv au lieu de poetry.",
           "Désormais, on gère toujours les versions avec un changelog."),
    "ja": ("今後、依存関係は必ず poetry で管理してください。",
           "訂正：依存関係は poetry の代わりに uv で管理してください。",
           "今後、リリースごとに必ず changelog を更新してください。"),
    "ko": ("앞으로 의존성은 항상 poetry로 관리하세요.",
           "정정: 의존성은 poetry 대신 uv로 관리하세요.",
           "앞으로 릴리스마다 항상 changelog를 업데이트하세요."),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_a_rule_and_its_correction_a_session_later(story: Story, lang: str) -> None:
    rule, correction, _ = CASES[lang]
    story.session("ledger", Turn(rule, last="OK."))
    [first] = [r for r in story.active("ledger") if r["kind"] == "rule"]
    assert "poetry" in first["title"] and first["why"]["by"] == "user"

    story.session("ledger", Turn(correction, last="OK."))
    rows = story.rows("ledger")
    assert next(r for r in rows if r["id"] == first["id"])["status"] == "superseded", rows
    rules = [r for r in rows if r["kind"] == "rule" and r["status"] == "active"]
    assert rules and all("uv" in r["title"] for r in rules), rules
    standing = story.context("ledger").split("## Standing rules")[1].split("\n## ")[0]
    assert "uv" in standing and rule.rstrip(".。")[:25] not in standing


@pytest.mark.parametrize("lang", sorted(CASES))
def test_a_correction_leaves_a_rule_about_something_else(story: Story, lang: str) -> None:
    """The unrelated rule shares the correction's common words, not what it replaces."""
    _, correction, other = CASES[lang]
    story.session("ledger", Turn(other, last="OK."))
    [kept] = [r for r in story.active("ledger") if r["kind"] == "rule"]
    story.session("ledger", Turn(correction, last="OK."))
    assert next(r for r in story.rows("ledger") if r["id"] == kept["id"])["status"] == "active"


@pytest.mark.parametrize("once", [
    "Let's try uv instead of poetry for this one script and see if it is faster.",
    "Install the package with pip instead of poetry just this once.",
    "Correction: just this once, install it with pip instead of poetry.",
    "Korrektur: nur dieses eine Mal pip statt poetry verwenden.",
    "更正：这次先用 pip 代替 poetry 安装。",
    "訂正：今回だけ poetry の代わりに pip を使ってください。",
])
def test_what_holds_for_once_replaces_no_rule(story: Story, once: str) -> None:
    """A trial, a one-off or this piece of work only, even labelled a correction, is no new rule: the rule stays."""
    story.session("ledger", Turn(CASES["en"][0], last="OK."))
    [rule] = [r for r in story.active("ledger") if r["kind"] == "rule"]
    story.session("ledger", Turn(once, last="OK."))
    rows = story.rows("ledger")
    assert next(r for r in rows if r["id"] == rule["id"])["status"] == "active", rows
    assert [r["id"] for r in rows if r["kind"] == "rule" and r["status"] == "active"] == [rule["id"]]


# A decision with its reason, and a root cause with its fix the agent explains (as tests/unit/test_memory_in_chinese.py)
DECISIONS = {
    "de": "Wir haben entschieden, den Berichtsdienst auf ClickHouse "
          "umzustellen, weil die Aggregationen in Postgres zu "
          "langsam sind.",
    "es": "Decidimos mover el servicio de informes a ClickHouse "
          "porque las agregaciones en Postgres son demasiado lentas.",
    "pt": "Decidimos mover o serviço de relatórios para ClickHouse "
          "porque as agregações no Postgres são lentas demais.",
    "it": "Abbiamo deciso di spostare il servizio di report su "
          "ClickHouse perché le aggregazioni in Postgres sono troppo "
          "lente.",
    "tr": "Raporlama servisini ClickHouse'a taşımaya karar verdik "
          "çünkü Postgres'teki toplama sorguları çok yavaş.",
    "ru": "Мы решили перенести сервис отчётов на ClickHouse, потому "
          "что агрегации в Postgres слишком медленные.",
    "fr": "Nous avons décidé de passer le service de rapports sur "
          "ClickHouse parce que les agrégations Postgres sont trop "
          "lentes.",
    "ja": "レポートサービスは ClickHouse に移すことに決めました。Postgres の集計クエリが遅すぎるためです。",
    "ko": "보고서 서비스를 ClickHouse로 옮기기로 결정했습니다. Postgres 집계 쿼리가 너무 느리기 "
          "때문입니다.",
}
CAUSES = {
    "de": "Ursache: Der Abgleich nutzt die lokale Zeit, der Server "
          "läuft aber in UTC, deshalb landen Buchungen am Vortag. "
          "Behoben: jetzt überall UTC.",
    "es": "Causa raíz: la conciliación usa la hora local pero el "
          "servidor está en UTC, por eso las transacciones caen en "
          "el día anterior. Corregido: ahora todo usa UTC.",
    "pt": "Causa raiz: a conciliação usa a hora local mas o servidor "
          "está em UTC, por isso as transações caem no dia anterior. "
          "Corrigido: agora tudo usa UTC.",
    "it": "Causa: la riconciliazione usa l'ora locale ma il server è "
          "in UTC, perciò le transazioni finiscono nel giorno "
          "precedente. Corretto: ora tutto usa UTC.",
    "tr": "Kök neden: mutabakat yerel saati kullanıyor ama sunucu "
          "UTC'de, bu yüzden işlemler önceki güne düşüyor. "
          "Düzeltildi: artık her yerde UTC kullanılıyor.",
    "ru": "Причина: сверка использует локальное время, а сервер "
          "работает в UTC, поэтому операции попадают в предыдущий "
          "день. Исправлено: теперь везде UTC.",
    "fr": "Cause racine : le rapprochement utilise l'heure locale "
          "alors que le serveur est en UTC, donc les transactions "
          "tombent la veille. Corrigé : tout passe en UTC.",
    "ja": "根本原因：照合ジョブがローカル時間を使っていて、サーバーは UTC "
          "なので、取引が前日に計上されていました。修正：すべて UTC に統一しました。",
    "ko": "원인: 대사 작업이 로컬 시간을 쓰는데 서버는 UTC라서 거래가 전날로 잡혔습니다. 수정: 이제 모두 "
          "UTC를 사용합니다.",
}


@pytest.mark.parametrize("lang", sorted(DECISIONS))
def test_a_decision_with_its_reason(story: Story, lang: str) -> None:
    story.session("ledger", Turn(DECISIONS[lang], last="OK."))
    decisions = [r for r in story.active("ledger") if r["kind"] == "decision"]
    assert decisions and all(r["layer"] == "key" for r in decisions), story.rows("ledger")
    assert "ClickHouse" in story.context("ledger").split("## Recent")[0]


@pytest.mark.parametrize("lang", sorted(CAUSES))
def test_a_root_cause_the_agent_explains(story: Story, lang: str) -> None:
    story.session("ledger", Turn(
        "fix the reconcile job",
        [bash("python -m jobs.reconcile", fails="ValueError: date out of range"),
         edit("/work/ledger", "jobs/reconcile.py", "datetime.now()", "datetime.now(timezone.utc)"),
         bash("python -m jobs.reconcile", "1203 rows")],
        last=CAUSES[lang]))
    causes = [r for r in story.active("ledger") if r["kind"] in ("rootcause", "fix") and "UTC" in r["title"]]
    assert causes and causes[0]["layer"] == "key", story.rows("ledger")
    assert "UTC" in story.context("ledger").split("## Recent")[0]


# The user asks why something fails, and the agent answers from what it read, changing nothing: a "why" is no
# routine question, in any of these languages ("Por que …", "neden", "почему" read as routine made the cause
# a note only).
WHY = {
    "de": ("Warum schlägt der nächtliche Export fehl?",
           "Die Ursache ist, dass der Export die Zeitzone aus der lokalen Umgebung liest, weil der Cron-Host in UTC "
           "läuft, deshalb ist der Datumsbereich um einen Tag verschoben."),
    "es": ("¿Por qué falla la exportación nocturna?",
           "La causa raíz es que la exportación lee la zona horaria del entorno local, porque el host de cron corre "
           "en UTC, así que el rango de fechas se desplaza un día."),
    "pt": ("Por que a exportação noturna falha?",
           "A causa raiz é que a exportação lê o fuso horário do ambiente local, porque o host do cron roda em UTC, "
           "então o intervalo de datas fica deslocado em um dia."),
    "it": ("Perché l'esportazione notturna fallisce?",
           "La causa principale è che l'esportazione legge il fuso orario dall'ambiente locale, perché l'host cron "
           "gira in UTC, quindi l'intervallo di date è spostato di un giorno."),
    "tr": ("Gece dışa aktarımı neden başarısız oluyor?",
           "Kök neden, dışa aktarımın saat dilimini yerel ortamdan okuması, çünkü cron sunucusu UTC'de çalışıyor, "
           "bu yüzden tarih aralığı bir gün kayıyor."),
    "ru": ("Почему падает ночной экспорт?",
           "Причина в том, что экспорт берёт часовой пояс из локального окружения, потому что cron-хост работает "
           "в UTC, поэтому диапазон дат сдвигается на день."),
    "fr": ("Pourquoi l'export de nuit échoue ?",
           "La cause racine est que l'export lit le fuseau horaire de l'environnement local, parce que l'hôte cron "
           "tourne en UTC, donc la plage de dates est décalée d'un jour."),
}


@pytest.mark.parametrize("lang", sorted(WHY))
def test_the_cause_given_to_a_why_question_is_a_key_memory(story: Story, lang: str) -> None:
    asked, said = WHY[lang]
    story.session("ledger", Turn(asked, [read("/work/ledger", "jobs/export.py")], last=said))
    causes = [r for r in story.active("ledger") if r["kind"] == "rootcause"]
    assert causes and causes[0]["layer"] == "key" and "UTC" in causes[0]["title"], story.rows("ledger")
    assert "UTC" in story.context("ledger").split("## Recent")[0]


@pytest.mark.parametrize(("words", "wrong"), [
    ("Le test échoue depuis hier", True), ("Der Build schlägt fehl", True), ("la build falla en CI", True),
    ("o teste falhou de novo", True), ("il test fallisce", True), ("test başarısız oldu", True),
    ("тест падает на CI", True), ("the plant grows", False), ("porque sí", False), ("a fall of the index", False),
])
def test_a_problem_is_reported_in_each_language(words: str, wrong: bool) -> None:
    from kenning.observer.gates import reports_a_problem

    assert reports_a_problem(words) is wrong


@pytest.mark.parametrize("said", [
    "Сейчас посмотрю логи, потому что задача дважды упала.",
    "Şimdi loglara bakacağım çünkü iş iki kez başarısız oldu.",
    "Vou verificar os logs porque o job falhou duas vezes.",
    "Jetzt schaue ich mir die Logs an, weil der Job zweimal fehlgeschlagen ist.",
])
def test_what_the_agent_says_it_will_do_next_is_no_memory(story: Story, said: str) -> None:
    """Its narration, in any language: the "because" says why it looks, not what was wrong (a Russian one was
    the explanation of a fixed failure: "Fixed `run-job`: boom (job.py) — Сейчас посмотрю логи, …")."""
    story.session("ledger", Turn("the nightly job fails, look into it",
                                 [bash("run-job", fails="boom"), edit("/work/ledger", "job.py"), bash("run-job", "ok")],
                                 last=said))
    kept = [r for r in story.active("ledger") if r["layer"] in ("key", "rule")]
    assert not kept, kept
    assert said[:12] not in story.context("ledger")


def test_a_rule_without_a_single_latin_letter_is_kept(story: Story) -> None:
    """A sentence in Cyrillic had no words for the observer (its word pattern was ASCII), so it was dropped as
    empty: "Всегда запускай линтер перед каждым коммитом" made no rule, while a rule naming `main` did."""
    story.session("ledger", Turn("Всегда запускай линтер перед каждым коммитом.", last="Хорошо."))
    [rule] = [r for r in story.active("ledger") if r["kind"] == "rule"]
    assert "линтер" in rule["title"]
    assert "линтер" in story.context("ledger").split("## Key")[0]


@pytest.mark.parametrize(("rule", "correction"), [
    ("From now on always write the commit messages in German.",
     "Correction: write the commit messages in English, not German."),
    ("Ab jetzt schreibst du die Commit-Nachrichten immer auf Deutsch.",
     "Korrektur: schreib die Commit-Nachrichten auf Englisch, nicht auf Deutsch."),
    ("С этого момента всегда пиши сообщения коммитов на немецком.",
     "Поправка: пиши сообщения коммитов на английском, не на немецком."),
])
def test_a_correction_that_names_what_it_is_not(story: Story, rule: str, correction: str) -> None:
    """"…, not German" names what it replaces as "instead of German" does; the label alone says it is a correction
    (the English one had no other correction word and stayed noise, the old rule current)."""
    story.session("ledger", Turn(rule, last="OK."))
    [first] = [r for r in story.active("ledger") if r["kind"] == "rule"]
    story.session("ledger", Turn(correction, last="OK."))
    rows = story.rows("ledger")
    assert next(r for r in rows if r["id"] == first["id"])["status"] == "superseded", rows
    [now] = [r for r in rows if r["kind"] == "rule" and r["status"] == "active"]
    assert now["id"] != first["id"]


@pytest.mark.parametrize("said", [
    "In allen Projekten: antworte mir bitte auf Deutsch.",     # the scope in a run-in label, with a "please"
    "Egal welches Projekt: halte deine Antworten kurz.",
    "Tüm projelerimde bana Türkçe cevap ver.",
    "Во всех моих проектах отвечай мне по-русски.",             # (no Latin letter: see the test above)
])
def test_a_preference_for_every_project_in_other_words(story: Story, said: str) -> None:
    """Said under a label ("In allen Projekten: …"), the scope was the unit's heading, not its words, and "bitte"
    made it a request for this turn: no preference at all. A preference for every project is the user's."""
    story.session("ledger", Turn(said, last="OK."))
    [pref] = [r for r in story.active("ledger") if r["kind"] == "rule"]
    assert pref["scope"] == "user", pref
    assert said.rstrip(".")[:12] in pref["title"]


# Work left for a later session, and a choice said to hold for now, in each language (the to-do's "next time" was
# an English, Chinese, Japanese and Korean cue only: the Russian one became a standing rule by its "нужно").
LATER = {
    "de": ("Beim nächsten Mal müssen wir die Wiederherstellung des Backups vor dem Release prüfen.",
           "Vorerst behalten wir den alten Parser, weil der neue noch Fehler hat."),
    "fr": ("La prochaine fois, il faut vérifier la restauration de la sauvegarde avant la release.",
           "Pour l'instant on garde l'ancien parseur, parce que le nouveau a encore des bugs."),
    "es": ("La próxima vez tenemos que verificar la restauración del backup antes del release.",
           "Por ahora mantenemos el parser antiguo, porque el nuevo todavía tiene errores."),
    "pt": ("Da próxima vez precisamos verificar a restauração do backup antes do release.",
           "Por enquanto mantemos o parser antigo, porque o novo ainda tem erros."),
    "it": ("La prossima volta dobbiamo verificare il ripristino del backup prima del rilascio.",
           "Per ora teniamo il vecchio parser, perché il nuovo ha ancora errori."),
    "tr": ("Bir dahaki sefere sürümden önce yedek geri yüklemeyi doğrulamalıyız.",
           "Şimdilik eski ayrıştırıcıyı tutuyoruz, çünkü yenisinde hâlâ hatalar var."),
    "ru": ("В следующий раз нужно проверить восстановление бэкапа перед релизом.",
           "Пока оставляем старый парсер, потому что в новом ещё есть ошибки."),
}


@pytest.mark.parametrize("lang", sorted(LATER))
def test_a_to_do_for_next_time_and_a_decision_for_now(story: Story, lang: str) -> None:
    todo, for_now = LATER[lang]
    story.session("ledger", Turn(todo, last="OK."))
    kinds = [r["kind"] for r in story.active("ledger") if r["layer"] in ("key", "rule")]
    assert kinds == ["todo"], story.rows("ledger")
    story.session("ledger", Turn(for_now, last="OK."))
    [decision] = [r for r in story.active("ledger") if r["kind"] == "decision"]
    assert decision["tentative"], decision


def test_a_root_cause_without_a_single_latin_letter_is_kept(story: Story) -> None:
    """The agent's cause in Cyrillic alone had no words for the observer and was dropped as empty."""
    story.session("ledger", Turn(
        "сверка падает каждую ночь",
        [bash("python -m jobs.reconcile", fails="ValueError"), edit("/work/ledger", "jobs/reconcile.py"),
         bash("python -m jobs.reconcile", "ok")],
        last="Причина: сверка использует местное время, а сервер работает по Гринвичу, поэтому операции попадают "
             "в предыдущий день. Исправлено: теперь везде всемирное время."))
    [cause] = [r for r in story.active("ledger") if r["kind"] == "rootcause"]
    assert cause["layer"] == "key" and "местное время" in cause["title"]


@pytest.mark.parametrize("said", [
    "We decided to move the report service to ClickHouse. The reason is that the Postgres aggregations are too slow.",
    "我们决定把报表服务迁到 ClickHouse。原因是现在的 Postgres 聚合查询太慢了。",
    "レポートサービスは ClickHouse に移すことに決めました。Postgres の集計クエリが遅すぎるためです。",
    "Wir haben uns für ClickHouse entschieden. Der Grund ist, dass Postgres zu langsam aggregiert.",
])
def test_a_decision_keeps_the_reason_said_in_the_next_sentence(story: Story, said: str) -> None:
    """Once a Chinese or Japanese full stop ended a sentence, the reason said after it was lost from the decision
    (and in English it was a 'decision' of its own: "The reason is that …")."""
    story.session("ledger", Turn(said, last="OK."))
    [decision] = [r for r in story.active("ledger") if r["kind"] == "decision"]
    assert "ClickHouse" in decision["title"] and "Postgres" in decision["title"], decision
