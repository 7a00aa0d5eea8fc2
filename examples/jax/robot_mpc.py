"""Sampling-based model-predictive control (MPPI-style) of a planar robot arm, batched over
rollouts: a lax.scan over the horizon integrates joint dynamics, computes forward kinematics of
the arm (cumulative joint angles and link positions) and accumulates a tracking cost; the rollout
costs then weight the sampled control sequences into one new plan. The scan is one loop over
time in the IR (its statement count does not grow with HORIZON)."""

import jax
import jax.numpy as jnp
from jax import lax

ROLLOUTS = 4096
HORIZON = 64
JOINTS = 7
DT = 0.02
DAMPING = 0.1
LINK_LENGTH = 0.3
CONTROL_WEIGHT = 1e-3
TEMPERATURE = 0.5


def forward_kinematics(q):
    """End-effector (x, y) of a planar chain of equal links, for a batch of joint vectors."""
    angles = jnp.cumsum(q, axis=-1)
    x = jnp.sum(LINK_LENGTH * jnp.cos(angles), axis=-1)
    y = jnp.sum(LINK_LENGTH * jnp.sin(angles), axis=-1)
    return x, y


def forward(q0, qd0, controls, target):
    """q0, qd0: (JOINTS,) current state; controls: (HORIZON, ROLLOUTS, JOINTS) sampled torques;
    target: (2,) end-effector goal. Returns the new plan (HORIZON, JOINTS) and rollout costs."""

    def step(carry, u):
        q, qd, cost = carry
        qd = qd + DT * (u - DAMPING * qd)
        q = q + DT * qd
        x, y = forward_kinematics(q)
        cost = (
            cost
            + (x - target[0]) ** 2
            + (y - target[1]) ** 2
            + CONTROL_WEIGHT * jnp.sum(u * u, axis=-1)
        )
        return (q, qd, cost), None

    init = (
        jnp.broadcast_to(q0, (ROLLOUTS, JOINTS)),
        jnp.broadcast_to(qd0, (ROLLOUTS, JOINTS)),
        jnp.zeros((ROLLOUTS,), jnp.float32),
    )
    (_, _, cost), _ = lax.scan(step, init, controls)
    weights = jax.nn.softmax(-(cost - cost.min()) / TEMPERATURE)
    plan = jnp.einsum("r,hrj->hj", weights, controls)
    return plan, cost


def get_inputs():
    f32 = jnp.float32
    return [
        jax.ShapeDtypeStruct((JOINTS,), f32),
        jax.ShapeDtypeStruct((JOINTS,), f32),
        jax.ShapeDtypeStruct((HORIZON, ROLLOUTS, JOINTS), f32),
        jax.ShapeDtypeStruct((2,), f32),
    ]
