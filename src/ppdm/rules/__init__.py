"""QI ⇒ SA association rules (paper 004 §V-A): Apriori mining and the published :class:`RuleSet`."""

from ppdm.rules.items import ItemCodes, is_association_rule
from ppdm.rules.mining import frequent_itemset_bound, mine_rules, sensitive_codes
from ppdm.rules.ruleset import Rule, RuleSet, rules_from_items

__all__ = ["ItemCodes", "Rule", "RuleSet", "frequent_itemset_bound", "is_association_rule", "mine_rules", "rules_from_items", "sensitive_codes"]
