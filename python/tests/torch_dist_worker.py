"""Run by test_torch_ledger.py: a private run of a small model under torch.distributed (gloo on
loopback) with WORLD processes; rank 0 prints the final parameters (float64 hex) as JSON, or the
ValueError of make_private, and the same run's parameters in one process. Usage: torch_dist_worker.py WORLD PORT SEED|secure [differ|params]."""

import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F


class Elementwise(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, 6, dtype=torch.float64))
        self.b = torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))

    def forward(self, v):
        return (torch.tanh(v[:, None, :] * self.w)).sum(-1) + self.b


def run(rank, world, port, seed, differ, out):
    import dpcorr.torch as dt
    torch.set_num_threads(1)
    if world > 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    x = torch.randn(60, 6, dtype=torch.float64)
    y = torch.randint(0, 3, (60,))
    model = Elementwise()
    if differ == "params" and rank == world - 1:  # another initialisation on the last rank
        with torch.no_grad():
            model.w[0, 0] += 1e-3
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    try:
        model, opt, loader, eng = dt.make_private(
            model, opt, torch.utils.data.TensorDataset(x, y),
            batch_size=12 if not (differ == "differ" and rank == world - 1) else 10, epochs=2,
            noise_multiplier=1.0, mech="nu", seed=seed, loss_reduction="sum")
    except ValueError as e:
        if rank == 0:
            out.put(json.dumps({"error": str(e)}))
        return
    for _ in range(2):
        for xb, yb in loader:
            opt.zero_grad()
            dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
            opt.step()
    params = [float(v).hex() for p in model.parameters() for v in p.detach().reshape(-1)]
    every = [None] * world
    if world > 1:
        dist.all_gather_object(every, params)
    else:
        every = [params]
    if rank == 0:
        res = {"params": params, "ranks_equal": all(e == params for e in every)}
        if world > 1:  # the same run in one process, here (no process group)
            dist.destroy_process_group()
            one = ctxless_queue()
            run(0, 1, port, 7 if seed is None else seed, False, one)
            res["one_process"] = json.loads(one.items[0])["params"]
        out.put(json.dumps(res))


class ctxless_queue:  # pylint: disable=invalid-name
    def __init__(self):
        self.items = []

    def put(self, item):
        self.items.append(item)


def main():
    world, port, seed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    seed = None if seed == "secure" else int(seed)
    differ = sys.argv[4] if len(sys.argv) > 4 else None  # "differ" (batch) or "params"
    import dpcorr.torch  # noqa: F401  (imported once, before the fork)
    ctx = torch.multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=run, args=(r, world, port, seed, differ, out))
             for r in range(world)]
    for p in procs:
        p.start()
    print(out.get(timeout=120))
    for p in procs:
        p.join(timeout=60)


if __name__ == "__main__":
    main()
