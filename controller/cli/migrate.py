"""``kubevec migrate``: move the store to the configured embedding model."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands, open_embedder, open_store
from kubevec.core.errors import CommandError

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings

    pass

logger = logging.getLogger("kubevec")


def register(commands: Commands) -> None:
    migrate = commands.add(
        "migrate",
        migrate_command,
        help="move the store to the configured embedding model: new collections from the stored texts, "
        "then an atomic switch (stop the controller first, or set KUBEVEC_SYNC__MIGRATE=true)",
    )
    migrate.add_argument("--batch-size", type=int, default=64, help="texts per embedding call (default 64)")


async def migrate_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.controller.sync.migrate import migrate
    from kubevec.core.errors import BackendError, ModelError

    if args.batch_size < 1:
        raise CommandError(f"--batch-size must be at least 1, got {args.batch_size}")
    store = open_store(settings, existing=True)
    embedder = open_embedder(settings)
    try:
        done = await migrate(
            store=store,
            embedder=embedder,
            settings=settings.embedder,
            bases=settings.bases(),
            pointer=settings.pointer,
            batch_size=args.batch_size,
            progress=sys.stderr,
        )
    except (BackendError, ModelError) as exc:
        raise CommandError(f"{exc.first_line()} (run it again to resume)") from exc
    finally:
        await store.close()
    if done.generation is None:
        print("Nothing to migrate: the store holds no collections yet")
    elif not done.changed:
        print(f"Nothing to migrate: generation {done.generation.number} already uses {done.generation.embedder}")
    else:
        assert done.previous is not None
        print(
            f"Migrated generation {done.previous.number} ({done.previous.embedder}) to generation "
            f"{done.generation.number} ({done.generation.embedder}): {done.embedded} embedded, "
            f"{done.skipped} already copied, {done.removed} removed; readers switched, old collections dropped"
        )
    return 0
