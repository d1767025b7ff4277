"""SkyRL's fully asynchronous trainer (``FullyAsyncRayPPOTrainer``) on dealroom episodes.

Run in skyrl-train's own environment (Python 3.12) with dealroom installed, through
examples/skyrl_fully_async.sh. The only dealroom-specific step is registering the
environment in the process that runs the generator.
"""

import asyncio

import hydra
import ray
from omegaconf import DictConfig
from skyrl_train.entrypoints.main_base import BasePPOExp, config_dir, validate_cfg
from skyrl_train.fully_async_trainer import FullyAsyncRayPPOTrainer
from skyrl_train.utils import initialize_ray

from dealroom.train import register_skyrl_env


class DealroomFullyAsync(BasePPOExp):
    def get_trainer(self, cfg, tracker, tokenizer, train_dataset, eval_dataset,
                    inference_engine_client, generator, colocate_pg):
        return FullyAsyncRayPPOTrainer(
            cfg=cfg, tracker=tracker, tokenizer=tokenizer, train_dataset=train_dataset,
            eval_dataset=eval_dataset, inference_engine_client=inference_engine_client,
            generator=generator, colocate_pg=colocate_pg)

    def run(self):
        asyncio.run(self._setup_trainer().train())


@ray.remote(num_cpus=1)
def entrypoint(cfg: DictConfig):
    register_skyrl_env()  # skyrl_gym.make("dealroom", ...) in this worker
    DealroomFullyAsync(cfg).run()


@hydra.main(config_path=config_dir, config_name="ppo_base_config", version_base=None)
def main(cfg: DictConfig) -> None:
    validate_cfg(cfg)
    initialize_ray(cfg)
    ray.get(entrypoint.remote(cfg))


if __name__ == "__main__":
    main()
