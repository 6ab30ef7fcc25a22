"""The chat prompt: a follow-up message rewritten as a question that stands alone (``agents/followup.py``).

The previous turn (the question as it was read, and its answer) is quoted data: the answer was
written from retrieved text. The user's message is the user's own text and stays outside it.
"""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

FOLLOW_UP_SYSTEM = guarded(
    "You rewrite the latest message of a chat about a knowledge base as one question that is "
    "understood without the chat. Replace each pronoun (it, he, she, they...) by the name it stands "
    "for, and add the entity a short follow-up leaves out, taking the names from the previous turn. "
    "A message that is already a complete question is returned as it is. Keep the user's wording "
    "wherever you can, and never answer the question."
)

FOLLOW_UP = Prompt(
    "chat.follow_up",
    "Previous turn:\n{previous}\n\nLatest message: {message}\n\nThe latest message as a question that stands alone:",
    ("previous", "message"),
)

ALL = (FOLLOW_UP,)
