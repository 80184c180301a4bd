"""Cue words in several languages, grouped by what they signal (a cause, a standing instruction, a
correction, something provisional …).

They serve twice: as features of the role model (one feature per signal, whatever the language:
what the model learns from English "because" holds for Chinese 因为), and as the explicit signals
the observer checks before it trusts the model (a rule for every project must say so; a tentative
decision is marked only when it says it is provisional). Our own lists, kept short and common:
English, Chinese, Japanese, Korean, French, German, Spanish, Portuguese, Italian, Turkish, Russian.
"""

from __future__ import annotations

import re
from functools import lru_cache

# signal: (patterns matched with word boundaries (Latin scripts), substrings matched as they are (CJK))
_CUES: dict[str, tuple[str, str]] = {
    "cause": (
        r"root cause|the cause|caused by|because|due to|the reason|turned out|comes? from|came from|stems? from|"
        r"the (?:problem|issue|bug|culprit|crash|failure) (?:is|was)|that'?s why|which is why|"
        r"cause racine|parce que|à cause de|en raison de|provient de|ursache|weil|wegen|liegt (?:daran|an)|"
        r"causa raíz|porque|debido a|se debe a|"
        r"por causa de|devido a|causa raiz|perché|a causa di|dovuto a|la causa|çünkü|yüzünden|nedeniyle|"
        r"kök neden|потому что|из-за|причина|"
        r"causa|perciò|per questo|por isso|поэтому|bu yüzden|deshalb|daher|por eso|c'est pourquoi",
        "根因 根本原因 原因是 原因在于 因为 由于 导致 造成 引起 所以才 原因 原因は のせいで せいで ため、 "
        "によって 根本 "
        "원인 때문에 때문 로 인해 탓에 이유는"),
    "fix": (
        r"fixed|fixes|the fix|fix(?:ed)? by|resolved|solved|now (?:works|passes|returns|uses|handles|calls)|"
        r"instead of|replaced|corrigé|corrige|correctif|résolu|behoben|korrigiert|gelöst|corregido|solucionado|"
        r"arreglado|"
        r"corrigido|resolvido|corretto|risolto|sistemato|düzeltildi|çözüldü|исправлено|исправил|починил",
        "修复 修正 解决 改为 改成 换成 修好 修改为 改用 修正した 直した 解決 修正しました 直しました 수정 "
        "고쳤 해결 바꿨"),
    "always": (
        r"always|never|every time|each time|whenever|from now on|going forward|by default|as a rule|"
        r"(?:before|after|on|for|in) (?:every|each|any|all) (?!of\b)\w+|"  # (not "for each of the types": a set)
        r"désormais|toujours|jamais|à partir de maintenant|dorénavant|immer|niemals|nie|"
        r"ab jetzt|künftig|grundsätzlich|siempre|nunca|a partir de ahora|de ahora en adelante|"
        r"sempre|a partir de agora|de agora em diante|daqui em diante|d'ora in poi|da ora in poi|ogni volta|"
        r"her zaman|bundan sonra|her seferinde|всегда|никогда|с этого момента|впредь|отныне|каждый раз",
        "以后 今后 总是 一律 始终 永远 每次 都要 一定要 务必 从现在起 今後 必ず 常に 絶対 いつも 毎回 以降 앞으로 항상 "
        "반드시 절대 매번 언제나"),
    "convention": (
        r"we (?:use|don'?t use|never|always|prefer|keep|run|deploy|write|name|put)|(?:our|the) (?:convention|policy|"
        r"standard|rule) (?:is|here)|in this (?:repo|repository|project|codebase)|house style|"
        r"on (?:utilise|n'utilise pas)|wir (?:nutzen|verwenden)|usamos|no usamos",
        "我们用 我们不用 我们统一 这个项目里 这个仓库里 本项目 このリポジトリでは このプロジェクトでは 이 저장소에서는 "
        "이 프로젝트에서는"),
    "must": (
        r"must|mustn'?t|should|shouldn'?t|have to|has to|need to|needs to|required|is mandatory|"
        r"doit|doivent|il faut|obligatoire|muss|müssen|soll|sollen|pflicht|debe|deben|hay que|obligatorio|"
        r"deve|devem|precisa|tem que|obrigatório|devono|bisogna|occorre|è obbligatorio|gerekir|gerekiyor|zorunlu|"
        r"mutlaka|должен|должны|нужно|необходимо|обязательно",
        "必须 应该 应当 需要 得要 要求 べき 必要 なければ なくては 必須 해야 필요 필수"),
    "prohibit": (
        r"don'?t(?!\s+(?:know|think|see|understand|mind|care|remember|recall|believe|get it))|do not|never|avoid|"
        r"not allowed|forbidden|no more|stop (?:using|doing)|"
        r"ne (?:pas|jamais|plus)|n'(?:utilise|utilisez)|interdit|évite[rz]?|nicht|kein|keine|verboten|vermeide|"
        r"no (?:uses|usar|hagas)|prohibido|"
        r"não (?:use|usar|faça|fazer|mude|mexa)|evite|proibido|non (?:usare|usate|fare|toccare|cambiare)|"
        r"evita(?:re)?|vietato|kullanma(?:yın)?|yapma(?:yın)?|asla|yasak|не (?:используй(?:те)?|делай(?:те)?|"
        r"трогай(?:те)?|меняй(?:те)?)|нельзя|запрещено",
        "不要 别再 别用 别改 别动 不许 禁止 不准 不能 不得 避免 しないで ないで 禁止 避け 하지 마 하지마 "
        "말고 금지 피해"),
    "prefer": (
        r"prefer|i like|i'?d rather|we'?d rather|i want|we want|i hate|i dislike|préfère|préférons|j'aime|"
        r"bevorzuge|lieber|ich mag|prefiero|preferimos|me gusta|"
        r"prefiro|prefer(?:isco|iamo)|mi piace|tercih ederim|tercih ediyorum|предпочитаю|мне нравится",
        "我喜欢 更喜欢 偏好 倾向 我希望 我想要 好み 好き 좋아 선호 원해"),
    "user_scope": (
        r"in (?:every|each|all|any) (?:of my )?(?:projects?|repos?|repositor(?:y|ies)|codebases?)|"
        r"whatever the (?:repo|repository|project)|whichever (?:repo|repository|project)|across (?:all )?"
        r"(?:my )?projects|(?:always )?(?:answer|reply|respond|talk|write|speak) (?:to )?me|for me(?! to\b)|about me|"
        r"my (?:style|preference|habit)s?|dans tous (?:les|mes) projets|quel que soit le (?:projet|dépôt)|"
        r"in allen (?:meinen )?projekten|egal welches (?:projekt|repo)|en todos (?:los|mis) proyectos|"
        r"em todos os (?:meus )?projetos|in tutti i (?:miei )?progetti|(?:tüm|bütün) projeler(?:de|imde)|her projede|"
        r"во всех (?:моих )?проектах|в любом проекте",
        "所有项目 每个项目 任何项目 任何一个项目 不管哪个项目 不管在哪个项目 不管哪个仓库 不管在哪个仓库 无论哪个项目 "
        "无论在哪个项目 无论哪个仓库 所有仓库 所有的项目 在哪个项目里 跟我说 回答我 对我 "
        "全てのプロジェクト すべてのプロジェクト どのプロジェクト どのリポジトリ 私に 모든 프로젝트 "
        "어떤 프로젝트 저에게 나에게"),
    "correction": (
        r"actually|correction|instead|no longer|not any ?more|anymore|switch(?:ed)? to|scratch that|"
        r"i was wrong|changed my mind|en fait|plutôt|au lieu de|ne plus|correction|stattdessen|nicht mehr|"
        r"korrektur|en realidad|en lugar de|ya no|corrección|"
        r"statt|kein(?:e[nrs]?)? \w+ mehr|en vez de|no \w+ más|em vez de|ao invés de|não \w+ mais|correção|"
        r"na verdade|correzione|invece di|non \w+ più|in realtà|düzeltme|yerine|aslında|поправка|исправление|вместо|"
        r"больше не|на самом деле",
        "更正 改用 不再 其实 换成 改为 纠正 订正 更改 訂正 代わりに もう 실은 정정 대신 더 이상 바꿔"),
    "tentative": (
        r"for now|tentative(?:ly)?|temporar(?:y|ily)|for the time being|provisional(?:ly)?|until (?:we|further)|"
        r"pour l'instant|pour le moment|provisoire(?:ment)?|vorerst|vorläufig|fürs erste|por ahora|"
        r"provisional(?:mente)?|de momento|"
        r"por enquanto|provisoriamente|temporariamente|per ora|per il momento|provvisoriamente|temporaneamente|"
        r"şimdilik|geçici olarak|пока что|временно|^пока(?= )",
        "暂定 暂时 目前先 先这样 先用 临时 暫定 とりあえず 一旦 当面 ひとまず 일단 임시 당분간 우선"),
    "todo": (
        # "later" and "remaining" as work left, not as time ("12 hours later") or a count ("remaining hosts")
        r"todo|to-do|next time|(?<!hours )(?<!hour )(?<!minutes )(?<!seconds )(?<!days )(?<!weeks )(?<!years )"
        r"(?<!months )(?<!moments )(?<!ms )later"
        # (not the adjective: "later batches can still exceed the limit", "a later version")
        r"(?!\s+(?!(?:we|i|you|they|on|today|tonight|this|that|in|when|if|once|after|and|or|but|as|so|then|"
        r"with|by|for|to|is|was|the)\b)[a-z])|follow[- ]?up|still (?:need|open|to do)|"
        r"remaining(?=\s*[:：]|\s+(?:work|items?|tasks?|steps?|issues?|todos?|to-dos?|questions?|problems?|"
        r"failures?|fixes|changes|points?|gaps?)\b)|"
        r"(?:still|(?:\d+|two|three|four|five|a few|several)(?:\s+\w+)?)\s+remaining|left to|not yet|"
        r"open items?|pending|plus tard|reste à|pas encore|à faire|später|noch nicht|offen|noch zu|"
        r"pendiente|todavía no|más tarde|queda|"
        # "next time" in French, German, Spanish, Portuguese, Italian, Turkish and Russian
        r"la prochaine fois|(?:beim )?nächsten mal|nächstes mal|la próxima vez|(?:da|na) próxima vez|mais tarde|"
        r"ainda não|la prossima volta|più tardi|non ancora|bir dahaki sefere|gelecek sefere|daha sonra|henüz|"
        r"в следующий раз|позже|ещё не|еще не",
        "待办 下次 以后再 还需要 还没 尚未 待定 遗留 后续 回头 後で 次回 残り まだ 未対応 나중에 다음에 아직 "
        "남은 후속"),
    "decided": (
        r"decided|we chose|i chose|went with|we'?ll use|we will use|decision|settled on|opted|agreed|"
        # a choice said to be one: "that was deliberate: …", "by design", "c'est voulu", "故意"
        r"deliberate(?:ly)?|intentional(?:ly)?|on purpose|by design|"
        r"décidé|choisi|exprès|voulu|délibérément|entschieden|gewählt|absichtlich|mit absicht|ist absicht|"
        r"decidimos|elegimos|decidido|a propósito|intencionad[oa]|deliberadamente|"
        r"escolhemos|abbiamo deciso|deciso di|karar verdik|решили|решено|"
        r"decidi|decidiu|ho deciso|karar verildi|решил|решила",
        "决定 选择 采用 就用 定了 故意 有意为之 決定 採用 ことにする 選んだ 意図的 わざと "
        "결정 선택 채택 하기로 일부러 의도적 決めた 決めました ことにした ことにしました"),
    "gotcha": (
        r"note that|careful|watch out|gotcha|beware|heads up|does(?:n'?t| not) (?:exist|work|support)|"
        r"is(?:n'?t| not) supported|only works|requires?|won'?t work|unless|workaround|attention|piège|"
        r"n'existe pas|achtung|vorsicht|existiert nicht|cuidado|ojo|no existe",
        "注意 小心 坑 不支持 不存在 无法 需要先 陷阱 注意点 罠 存在しない 対応していない 주의 함정 지원하지 없습니다"),
    "done": (
        r"done|committed|pushed|merged|released|shipped|opened (?:a )?pr|pr (?:is )?open|all tests pass|"
        r"completed|finished|terminé|commité|poussé|fusionné|fertig|gepusht|gemergt|abgeschlossen|terminado|"
        r"listo|completado",
        "完成 已提交 已推送 已合并 已发布 搞定 完了 コミット済み プッシュ 済み マージ 완료 커밋 푸시 머지 끝났"),
    "blocked": (
        r"blocked|waiting (?:for|on)|not committed|uncommitted|not pushed|unpushed|on hold|paused|"
        r"bloqué|en attente|blockiert|wartet|bloqueado|esperando|en pausa",
        "阻塞 卡住 等待 未提交 未推送 搁置 暂停 ブロック 待ち 未コミット 保留 대기 막힘 보류"),
    "narrate": (
        r"let me|let's|i'?ll|i will|i'?m going to|now i|next,? i|first,? i|i need to|i'?m (?:checking|reading|"
        r"looking)|looking at|je vais|laisse-moi|ich werde|lass mich|voy a|déjame|"
        r"agora vou|deix[ae]-me|vou (?:verificar|checar|olhar|ver|analisar|rodar|executar)|lasciami|"
        r"fammi (?:vedere|controllare)|ora (?:controllo|guardo|verifico)|bakacağım|bakayım|kontrol edeceğim|"
        r"сейчас (?:посмотрю|проверю|запущу)|давай(?:те)? (?:посмотрим|проверим)|посмотрю|проверю",
        "让我 我来 我先 接下来 我会 我去 看一下 してみます します 確認します 見てみます 하겠습니다 확인해 볼게"),
    "request": (
        r"can you|could you|would you|please|pls|i'?d like you to|go ahead|peux-tu|pouvez-vous|pourrais-tu|"
        r"s'il te plaît|kannst du|könntest du|bitte|puedes|podrías|por favor|"
        r"você pode|poderia|per favore|puoi|potresti|lütfen|пожалуйста|можешь",
        "请 帮我 能不能 可以帮 麻烦 お願い ください してくれ 해줘 해 주세요 주세요 부탁"),
    "praise": (
        r"thanks|thank you|great|nice|perfect|awesome|well done|good job|merci|parfait|super|danke|"
        r"gracias|perfecto|genial",
        "谢谢 好的 很好 太棒 不错 完美 ありがとう 完璧 すごい 고마워 감사 완벽 좋아요"),
    "proposal": (  # what the agent recommends: a decision only once someone takes it
        r"i(?:'d| would)? (?:recommend|suggest|propose)|recommendations?|suggestions?|proposals?|recommended|"
        r"we could|you could|"
        r"(?:you|we) (?:might|may) want to|consider (?:\w+ing|using|switching|migrating|moving)|options? (?:are|is)|"
        r"je (?:recommande|propose|suggère)|ich (?:empfehle|schlage vor)|recomiendo|sugiero",
        "建议 推荐 可以考虑 不妨 おすすめ 推奨 提案 お勧め 추천 제안 권장"),
    "hypothesis": (
        r"i think|maybe|perhaps|my assumption|i assume|probably|might be|might not|i guess|i suspect|could it be|"
        r"it['’]?s possible|it is possible|presumably|my guess|i['’]d guess|it seems|seems like|apparently|"
        # options still open: "we should either check for it and fall back to grep, or default to grep"
        r"(?:should|could|can|might|may|would) either|"
        r"i (?:don'?t|do not) know|not sure|i wonder|(?:seems|appears) to|looks like|"
        # what must have gone wrong, inferred ("so either must be a bug in the test or an issue with the agent")
        r"must (?:be|have been) (?:a |an |the )?(?:bug|issue|problem|mistake|regression|typo|race|leak|caus\w+|broken|"
        r"wrong|stale|missing)|"
        r"peut-être|je pense|je suppose|vielleicht|ich glaube|vermutlich|quizás|tal vez|creo que",
        "我觉得 可能 也许 猜 大概 应该是 似乎 看起来 好像 かもしれない たぶん 多分 と思う ようです みたいです "
        "아마 같아요 것 같 보입니다 보이네요 듯합니다"),
    "reason": (
        r"so that|in order to|to avoid|to keep|to prevent|otherwise|that'?s why|since|pour que|afin de|sinon|"
        r"damit|um zu|sonst|para que|para evitar|de lo contrario",
        "为了 以免 否则 以便 不然 ために ように さもないと 위해 그래야 안 그러면"),
}


def _compile(words: str, cjk: str) -> re.Pattern[str]:
    # A whole word, not part of a name: "`temporary.go`", "`ctx.Done()`" and "`TODO.md`" say nothing provisional,
    # finished or left to do (a plan's "`checkpoint/temporary.go` - Filter …" was read as tentative)
    parts = [rf"(?<![\w.-])(?:{words})(?![\w-]|\.\w)"] if words else []
    parts += [re.escape(w.replace("\u00a0", " ")) for w in cjk.split(" ") if w]  # a no-break space joins a phrase
    return re.compile("|".join(parts), re.IGNORECASE)


PATTERNS: dict[str, re.Pattern[str]] = {name: _compile(w, c) for name, (w, c) in _CUES.items()}
SIGNALS = tuple(PATTERNS)
# (a Japanese question may close with what it asks about in brackets: "…不自然でないか（既存の通知と整合しているか）")
_QUESTION = re.compile(r"[?？]\s*$|(?:吗|呢|么)[。.]?\s*$|(?:ですか|ますか|でしょうか|[ないるたの]か)[。.]?"
                       r"(?:[（(][^）)]{0,80}[）)])?\s*$|"
                       r"(?:나요|까요|니까)[.]?\s*$|"
                       # "Do not apply linting to the tests" is an order, not a question
                       r"^(?:how|why|what|where|which|who|when|is|are|can|could|should|would|will)\b|"
                       r"^(?:does|do|did)\b(?!\s+not\b)",
                       re.IGNORECASE)


@lru_cache(maxsize=4096)
def signals(text: str) -> frozenset[str]:
    """The signals ``text`` carries ("cause", "always", "tentative", "question" …)."""
    t = text or ""
    found = {name for name, rx in PATTERNS.items() if rx.search(t)}
    if _QUESTION.search(t.strip()):
        found.add("question")
    return frozenset(found)


def has(text: str, signal: str) -> bool:
    if signal == "question":
        return bool(_QUESTION.search((text or "").strip()))
    return bool(PATTERNS[signal].search(text or ""))


# Words only English among the languages we read: a text in Latin letters without any is not English (German,
# Spanish, Portuguese … often need no accent): the English grammar of rules must not be the one that reads it.
_ENGLISH = re.compile(r"\b(?:the|to|and|of|we|for|is|it|its|this|that|with|instead|always|never|don'?t|do not|please|"
                      r"should|must|from|now|any|our|be|are|not|only|when|every|each|anymore|my|you|your|us|then|"
                      r"than|after|before|into|by|was|were|has|have|had|will|would|can|could|runs?|moved?|"
                      r"switch(?:ed)?|stop|start|keep|make|all|no longer|prefer|want|need|like)\b", re.IGNORECASE)
_FRAMING = re.compile(r"\b(?:stated|typed|said|reported|suspected|explained|listed|proved) by the (?:user|agent)\b"
                      r"[^.]*|\bUser:|\bfrom the plan the user accepted\b|\bas the agent (?:explained|listed) them\b|"
                      r"\b(?:root cause|problem) and fix\b")


def english(text: str) -> bool:
    """Whether ``text`` reads as English (the grammar of rules, kenning/observer/stated.py, reads it); the words
    our observers put around what was said ("stated by the user", "User: …") are not the memory's language."""
    return text.isascii() and bool(_ENGLISH.search(_FRAMING.sub(" ", text)))


# A reply that picks one of the options the agent laid out ("A for all calls", "do B instead", "option 2",
# "方案B", "2案で"): a choice that only the option's text makes readable, never a rule on its own.
# Option letters are capitals A-F standing alone (not "A/B", not the article "A new …").
_OPTION = re.compile(
    r"^\s*\(?[A-F]\)?(?:\s*(?:[,+&]|and|or|und|et|y)\s*\(?[A-F]\)?)*\s*(?:$|[.!:,)—-]|\b(?:for|but|then|please|with|"
    r"instead|is|sounds|looks|works|it)\b)|"
    r"\b(?:do|go with|pick|choose|take|prefer|use|want|like|keep)\s+(?:option\s+)?\(?[A-F]\)?(?![\w/])|"
    r"\b(?:[Oo]ption|[Cc]hoice|[Aa]pproach|[Vv]ariant|[Aa]lternative)\s*#?\s*(?:[A-F]|\d)\b|"
    r"^\s*\(?\d\)?\s*(?:$|[.!:,)])|"
    r"(?:方案|选项|选择|选|案|オプション|안|옵션)\s*[A-F一二三四1-9]|[A-F1-9一二三四]\s*(?:方案|号方案|案|안|번)")


def picks_option(text: str) -> bool:
    """Whether ``text`` answers with one of the options laid out before it."""
    return bool(_OPTION.search(text or ""))
