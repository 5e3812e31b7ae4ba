"""Airflow's own API app with its login, for tests of the pages this project serves inside it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest


@contextmanager
def airflow_app() -> Iterator[tuple[Any, Callable[[str | None], str]]]:
    """(the app, ``token(role)``: a signed-in user's JWT with that role) under the simple auth manager with
    roles enforced (not every user an admin), as a deployment runs it."""
    from airflow.api_fastapi.app import create_app, get_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS", "False")
        app = create_app()
        manager = get_auth_manager()

        def token(role: str | None) -> str:
            return manager.generate_jwt(SimpleAuthManagerUser(username=f"user-{role}", role=role))

        yield app, token
