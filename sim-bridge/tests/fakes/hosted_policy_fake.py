"""A user module for `policy_host --module`: one policy (a renamed ShellGameMemoryPolicy) that loads a weights file."""

from __future__ import annotations

import os
from typing import Any

from imep_sim_bridge.policy_host import ShellGameMemoryPolicy

WEIGHTS_ENV = "IMEP_FAKE_POLICY_WEIGHTS"


class FakeWeightsPolicy(ShellGameMemoryPolicy):
    name = "fake-weights"
    version = "7"

    def identity_files(self) -> dict[str, Any]:
        path = os.environ.get(WEIGHTS_ENV)
        return {} if path is None else {"weights.bin": path}


POLICIES = {FakeWeightsPolicy.name: FakeWeightsPolicy}
