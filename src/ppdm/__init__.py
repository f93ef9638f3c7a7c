"""ppdm: audit what a published decision tree or rule set discloses, and learn models that disclose less."""

__version__ = "0.1.0"
