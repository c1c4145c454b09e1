"""The queue benchmark's invariants, checked in SQL on the bench database: no unit over its
cap, nobody assigned or answering a unit twice, counters equal to their rows."""

from __future__ import annotations

import psycopg

from benchmarks.queue_setup import CAP, SLUG, pg_url

INVARIANTS = {
    "units over the cap": """
        SELECT count(*) FROM projects_unit
        WHERE project_id = %(p)s AND (completed > %(cap)s OR load > %(cap)s)""",
    "duplicate (unit, annotator) assignments": """
        SELECT count(*) FROM (SELECT unit_id, annotator_id FROM projects_assignment
        WHERE project_id = %(p)s GROUP BY 1, 2 HAVING count(*) > 1) d""",
    "duplicate (unit, annotator) annotations": """
        SELECT count(*) FROM (SELECT unit_id, annotator_id FROM projects_annotation
        WHERE project_id = %(p)s GROUP BY 1, 2 HAVING count(*) > 1) d""",
    "units whose completed != annotation rows": """
        SELECT count(*) FROM projects_unit u
        WHERE u.project_id = %(p)s AND u.completed <> (SELECT count(DISTINCT a.annotator_id)
            FROM projects_annotation a WHERE a.unit_id = u.id)""",
    "units whose completed != completed assignments": """
        SELECT count(*) FROM projects_unit u
        WHERE u.project_id = %(p)s AND u.completed <> (SELECT count(*)
            FROM projects_assignment s WHERE s.unit_id = u.id AND s.status = 'completed')""",
    "units whose load != assignment rows": """
        SELECT count(*) FROM projects_unit u
        WHERE u.project_id = %(p)s AND u.load <> (SELECT count(*)
            FROM projects_assignment s WHERE s.unit_id = u.id)""",
    "annotations without a completed assignment": """
        SELECT count(*) FROM projects_annotation a
        WHERE a.project_id = %(p)s AND NOT EXISTS (SELECT 1 FROM projects_assignment s
            WHERE s.unit_id = a.unit_id AND s.annotator_id = a.annotator_id
            AND s.status = 'completed')""",
}


def check_invariants(args, all_units: dict) -> tuple[list[str], dict]:
    """Broken invariants (empty when all hold) and the totals they were checked on."""
    broken = []
    with psycopg.connect(pg_url(args, args.db)) as conn:
        project = conn.execute(
            "SELECT id FROM projects_project WHERE slug = %s", [SLUG]
        ).fetchone()[0]
        for name, sql in INVARIANTS.items():
            count = conn.execute(sql, {"p": project, "cap": CAP}).fetchone()[0]
            if count:
                broken.append(f"{name}: {count}")
        annotations, completed_units = conn.execute(
            "SELECT (SELECT count(*) FROM projects_annotation WHERE project_id = %(p)s),"
            " (SELECT count(*) FROM projects_unit"
            " WHERE project_id = %(p)s AND completed = %(cap)s)",
            {"p": project, "cap": CAP},
        ).fetchone()
    answered = sum(len(v) for v in all_units.values())
    for user, units in all_units.items():
        if len(units) != len(set(units)):
            broken.append(f"{user} was handed a unit twice")
    if annotations != answered:
        broken.append(f"{answered} submissions accepted but {annotations} annotation rows")
    return broken, {"annotations": annotations, "units_at_cap": completed_units}


# ---------------------------------------------------------------- one project size
