"""Reward resolution for GRPO: names from simulator.rewards, dotted paths, JSON columns decoded."""

from __future__ import annotations

import pickle

import pytest

from training.rl.train import DecodedColumns, resolve_reward


class EchoColumnsRewardDouble:
    def __call__(self, completions, **kwargs):
        return [float(len(kwargs["tests"][i])) for i in range(len(completions))]


def test_named_rewards_resolve_and_pickle():
    for name in ("white_box", "output_prediction", "unit_tests"):
        reward = resolve_reward(name)
        assert reward.__name__ == name
        pickle.dumps(reward)  # TRL may ship rewards to worker processes


def test_a_dotted_path_resolves_and_json_columns_arrive_decoded():
    reward = resolve_reward(f"{__name__}:EchoColumnsRewardDouble")
    assert isinstance(reward, DecodedColumns)
    assert reward(["a", "b"], tests=['["x", "y"]', '["z"]']) == [2.0, 1.0]


def test_an_unknown_reward_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown reward 'nope'"):
        resolve_reward("nope")
