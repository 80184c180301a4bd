"""The prompt context through a real UserPromptSubmit hook and a real worker: a prompt saying
"k8s" is given the memory saying "Kubernetes", a Chinese prompt the memories its words name
(in Chinese, and in English through the synonym table); an unrelated memory sharing only the
synonym's word is not given."""

from __future__ import annotations

import time

from tests.conftest import Home
from tests.integration.test_context_hooks import context_of, fill, output, prompt_context_on, prompt_payload, remember


def test_prompt_words_through_the_hook(home: Home) -> None:
    prompt_context_on(home)
    home.start_worker()
    at = time.time() - 3600
    kube = remember(home, "Kubernetes namespaces are named after the team that owns the service", at=at)
    other = remember(home, "Kubernetes is not used for the batch jobs: they run from cron", at=at, session="s2")
    zh = remember(home, "周五上线之前必须跑完整的回归测试", at=at, session="s3")
    fill(home)  # the session-start index lists 50 newer notes: these are news to the session
    text = context_of(home.hook("UserPromptSubmit", prompt_payload(home, "How should I name the new k8s namespace "
                                                                         "for the search team?")), "UserPromptSubmit")
    assert f"#{kube} " in text and f"#{other} " not in text
    text = context_of(home.hook("UserPromptSubmit", prompt_payload(home, "周五下午可以上线吗？",
                                                                   session="zh-session")), "UserPromptSubmit")
    assert f"#{zh} " in text and f"#{kube} " not in text
    # The word alone, in another sense: nothing given.
    r = home.hook("UserPromptSubmit", prompt_payload(home, "Write a small k8s operator in Rust, just for fun",
                                                     session="fun-session"))
    assert output(r) is None
