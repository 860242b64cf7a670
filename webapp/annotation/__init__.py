"""Annotators correct models' simulated traces: a claimable review queue, live verification of edits
against the real trace, agreement between annotators, staff adjudication and a JSONL export."""
