"""The tools the model may call: each one carries its schema, its description (from
``generator.yaml``) and what else is known about it; :mod:`.registry` lists the defaults."""
