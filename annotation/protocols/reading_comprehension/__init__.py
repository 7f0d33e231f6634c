"""The reading comprehension protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it.
`kept_questions` is read by its result family; the question logic (`answer_flags`, `select_questions`,
`set_override`) is its plain logic, tested on its own."""
from .strategy import PROTOCOLS, answer_flags, kept_questions, select_questions, set_override

__all__ = ["PROTOCOLS", "answer_flags", "kept_questions", "select_questions", "set_override"]
