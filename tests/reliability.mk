# reliability tests (crash, fio, two mounts, security)
