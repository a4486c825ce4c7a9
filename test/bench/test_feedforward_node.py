"""The feedforward bench's node run: the controller's 1 kHz timer served as deployed."""

from legid_ros.bench.feedforward import node_jitter_process


def test_node_run_under_spin_serves_the_timer_and_publishes():
    """Under executor.spin (one long executor call, as run_node deploys the node) the 1 kHz
    wall timer ticks most periods of a 1 s run and each tick with a state publishes."""
    out = node_jitter_process(1.0, 0)
    assert out['ticks'] > 500
    assert out['published'] >= 0.9 * out['ticks']
    assert out['loop_jitter_ms_p50'] >= 0.0
