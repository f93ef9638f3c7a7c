"""The attackers an audit must never fall below (the model-free imputation, the likelihood rules) and the portfolio that reports the strongest measured."""
