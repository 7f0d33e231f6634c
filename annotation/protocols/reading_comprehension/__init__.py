"""The reading comprehension protocol package: `PROTOCOLS` (its strategy objects, named in settings.MTEVAL_PROTOCOLS),
its HIT planner and formats, and what other parts legitimately read of it.
`kept_questions` is read by its result family; the question logic (`answer_flags`, `select_questions`,
`set_override`) is its plain logic, tested on its own."""
from .comprehension import answer_flags, kept_questions, select_questions, set_override
from .stage_strategy import STAGE_PROTOCOLS
from .strategy import ReadingComprehension

#: The write stage (strategy.py), then the vote, answer and grade stages (stage_strategy.py), in the order of the
#: protocol choices (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (ReadingComprehension(), *STAGE_PROTOCOLS)

__all__ = ["PROTOCOLS", "answer_flags", "kept_questions", "select_questions", "set_override"]
