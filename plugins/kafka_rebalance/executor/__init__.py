"""Running an approved plan: the executor (continuous schedule or batch waves), its ledger, the gate that
says whether work may start (pause/resume/stop requests, maintenance windows)."""
