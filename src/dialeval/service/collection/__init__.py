"""Chat collection (WOCHAT task 1, COLLECT.md): people chat with a chat engine, or with each other, and the
chats are exported as WOCHAT XML.

Modules: :mod:`.engines` (one adapter per scheme behind ``reply(dialogue) -> utterance``), :mod:`.sessions`
(the pure policy: roles, turn-taking, limits, pairing), :mod:`.tables` (the database tables),
:mod:`.chats` (the operations, in locked transactions), :mod:`.routes` (pages, JSON API, WebSocket) and
:mod:`.export` (the chats as a Corpus and as WOCHAT XML).
"""
