"""What is being checked: the workspace (Git root, sub-configs), the project's files and documents."""
