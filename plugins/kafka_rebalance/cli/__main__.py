from kafka_rebalance.cli import main

main()
