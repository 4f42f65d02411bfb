"""A hosted policy with no bank of its own (`bank = "history"`) reports memory {bank: history}: IMEP gives it history."""

from imep_sim_bridge.policy_host import ShellGameMemoryPolicy, policy_identity


class HistoryPolicy:
    name = "history-test"
    version = "1"
    bank = "history"

    def __init__(self, max_batch: int = 1) -> None:
        self.max_batch = max_batch


def test_history_policy_reports_history_memory() -> None:
    ident = policy_identity(HistoryPolicy())  # type: ignore[arg-type]
    assert ident["memory"] == {"bank": "history"}
    assert ident["files"][0]["path"].endswith("test_history_identity.py")


def test_a_banked_policy_still_reports_its_episode_local_bank() -> None:
    ident = policy_identity(ShellGameMemoryPolicy(max_batch=1))  # type: ignore[arg-type]
    assert ident["memory"]["bank"] == "episode-local"
