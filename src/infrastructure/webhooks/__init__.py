"""Gates that call a person (docs/webhooks.md): the courier that announces gates to BLACKBOARD_WEBHOOKS, and
how it signs and sends one body. The outbox it keeps is persistence/webhooks.py; the body, documents/webhooks.py."""
