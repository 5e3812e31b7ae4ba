"""One quiet, in-memory GX context per process, with a Data Docs site per run.

Creating datasources and suites costs little, importing GX a few seconds: so the
context is made once and reused; each run replaces the suites (the JSON may have
changed), clears earlier validation results (so one plan's Data Docs never list
another plan's runs) and points the Data Docs site at the plan directory.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

_CONTEXT: Any = None
SITE = "plan"


def quiet() -> None:
    """GX logs every public-API registration at INFO, and draws progress bars: not in our output."""
    for name in ("great_expectations", "great_expectations._docs_decorators", "py4j"):
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")


def context() -> Any:
    global _CONTEXT
    if _CONTEXT is None:
        quiet()
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        ctx = gx.get_context(mode="ephemeral")
        ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
        for site in list(ctx.get_site_names()):
            ctx.delete_data_docs_site(site)  # the default site writes into a temp dir
        _CONTEXT = ctx
    return _CONTEXT


def reset_for_run(docs_dir: Path) -> Any:
    ctx = context()
    store = ctx.validation_results_store
    for key in store.list_keys():
        store.remove_key(key)
    if SITE in ctx.get_site_names():
        ctx.delete_data_docs_site(SITE)
    ctx.add_data_docs_site(
        SITE,
        {
            "class_name": "SiteBuilder",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        },
    )
    return ctx


def datasource(engine: str) -> Any:
    ctx = context()
    name = f"rows_{engine}"
    try:
        return ctx.data_sources.get(name)
    except (KeyError, ValueError, LookupError):
        pass
    except Exception:
        pass
    if engine == "spark":
        return ctx.data_sources.add_spark(name)
    return ctx.data_sources.add_pandas(name)


def validation_definition(engine: str, suite: Any) -> Any:
    """Suite + whole-dataframe batch of the asset named after the suite, replacing any earlier one."""
    import great_expectations as gx

    ctx = context()
    ds = datasource(engine)
    try:
        asset = ds.get_asset(suite.name)
    except LookupError:
        asset = ds.add_dataframe_asset(suite.name)
    except Exception:
        asset = ds.add_dataframe_asset(suite.name)
    try:
        batch = asset.get_batch_definition("all rows")
    except Exception:
        batch = asset.add_batch_definition_whole_dataframe("all rows")
    vd_name = f"{engine}:{suite.name}"
    for store_name, collection in ((vd_name, ctx.validation_definitions), (suite.name, ctx.suites)):
        try:
            collection.delete(store_name)
        except Exception:
            pass
    suite = ctx.suites.add(suite)
    return ctx.validation_definitions.add(gx.ValidationDefinition(name=vd_name, data=batch, suite=suite))
