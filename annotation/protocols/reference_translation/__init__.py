"""The reference translation protocol package: its strategy, and (moving in) its HIT planner, formats and screen."""
from .strategy import *  # noqa: F401,F403
