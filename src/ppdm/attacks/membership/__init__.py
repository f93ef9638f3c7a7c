"""Membership disclosure: the white-box audit (estimated and proved) and the black-box attacks on any classifier (confidence, LiRA, RMIA, shadow models and their cache)."""
