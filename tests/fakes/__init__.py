"""Test doubles the product never imports: fake systems and servers that misbehave on cue."""
