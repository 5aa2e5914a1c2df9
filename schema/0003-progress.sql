-- bisectd schema, version 3: what a claimed task is doing now, as its
-- agent says with each heartbeat ("building the kernel, 3:30, 850 files
-- compiled"), so that a watcher sees a long first build move.

ALTER TABLE tasks ADD COLUMN progress TEXT;
