# fs/: the b2fs program
